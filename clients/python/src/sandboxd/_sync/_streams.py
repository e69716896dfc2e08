"""The streamed answers of the sync client: the live event stream (``GET /v1/events/stream``, Server-Sent
Events), a background process's output and a directory watch (NDJSON), each an iterator over the answer as it
arrives (httpx, one pooled connection held while the stream is open).

Hand-written (``_async/_streams.py`` is the asyncio counterpart; both decode with ``_lines`` and ``_sse``).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, Generic, Iterator, List, Optional, TypeVar, cast

import httpx

from .._lines import LineBuffer, NdjsonDecoder, file_watch_events, process_events, run_events, shut_down
from ..models import FileWatchEvent, ProcessEvent, ProcessInfo
from .._sse import SseParser, StreamedEvent
from .transport import StreamedResponse

__all__ = [
    "EventStream",
    "StreamedEvent",
    "ProcessEventStream",
    "FileWatchStream",
    "RunEventStream",
    "OnOutput",
    "deliver",
]


#: Called with each piece of a process's output (text, as it arrives).
OnOutput = Callable[[str], None]

T = TypeVar("T")
S = TypeVar("S", bound="_Stream[Any]")


class _Stream(Generic[T]):
    """What the streams share: the answer read line by line, closing (from any thread), ``with`` and iteration.

    Subclasses turn lines into events (``_event_of``)."""

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        self._response = response.response
        self._chunks: Optional[Iterator[bytes]] = None
        self._lines = LineBuffer()
        self._ready: List[bytes] = []
        self._done = False
        self._reading = False
        self._lock = threading.Lock()
        #: Set by a subclass once the stream's last event was read.
        self._ended = False

    def __iter__(self: S) -> S:
        return self

    def __next__(self) -> T:
        event = self.next_event()
        if event is None:
            raise StopIteration
        return event

    def _next_line(self) -> Optional[bytes]:
        """The next whole line, or None at the end of the answer (or once closed)."""
        while not self._ready:
            with self._lock:
                if self._done:
                    return None
                self._reading = True
            try:
                if self._chunks is None:
                    self._chunks = self._response.iter_bytes()
                chunk = next(self._chunks, b"")
            except (httpx.HTTPError, OSError, ValueError, AttributeError):
                chunk = b""  # closed, or broken off (an answer cut short)
            except BaseException:
                with self._lock:
                    self._reading = False
                raise
            with self._lock:
                self._reading = False
                closed_meanwhile = self._done
            if closed_meanwhile:
                self._response.close()  # close() left it to this thread, which was inside it
                return None
            if not chunk:
                self.close()
                return None
            self._ready = self._lines.feed(chunk)
        return self._ready.pop(0)

    def next_event(self) -> Optional[T]:
        """The next event, or None once the stream ended."""
        while True:
            line = self._next_line()
            if line is None:
                return None
            try:
                event = self._event_of(line)
            except Exception:
                self.close()  # a stream that sends garbage is over
                raise
            if self._ended:
                self.close()
            if event is not None:
                return event

    def _event_of(self, line: bytes) -> Optional[T]:
        raise NotImplementedError

    def close(self) -> None:
        """Ends the stream and gives its connection back; from any thread (a read under way returns)."""
        with self._lock:
            if self._done:
                return
            self._done = True
            if self._reading:
                # Another thread is inside the answer: wake it; it closes the answer on its way out.
                shut_down(self._response)
                return
        self._response.close()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventStream(_Stream[StreamedEvent]):
    """Yields events until the server ends the stream or ``close()`` is called (from any thread).

    Use it in a ``with`` block, or close it: it holds a connection open. ``last_event_id`` is the id of the
    last event read (pass it to ``events.stream()`` to resume after a disconnection).
    """

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        super().__init__(response, transport)
        self._parser = SseParser()

    @property
    def last_event_id(self) -> Optional[str]:
        return self._parser.last_id or None

    def _event_of(self, line: bytes) -> Optional[StreamedEvent]:
        return self._parser.feed_line(line.decode("utf-8", errors="replace"))


class _NdjsonStream(_Stream[T]):
    """An NDJSON answer, each line an event. It ends after its last event, when the server ends the answer, or
    on ``close()`` (from any thread)."""

    def __init__(self, response: StreamedResponse, decoder: NdjsonDecoder) -> None:
        super().__init__(response)
        self._decoder = decoder

    def _event_of(self, line: bytes) -> Optional[T]:
        event = self._decoder.decode(line)
        if event is None:
            return None
        self._seen(event)
        self._ended = self._decoder.ended
        return cast(T, event)

    def _seen(self, event: Any) -> None:
        """Called with each event before it is returned."""


class ProcessEventStream(_NdjsonStream[ProcessEvent]):
    """The events of a background process's output, read from its NDJSON answer: ``sandboxd.models.ProcessEvent``
    objects with ``type`` (``start``, ``stdout``, ``stderr``, ``dropped``, ``exit``). It ends after the ``exit``
    event, when the server ends the answer (a stream that does not follow), or on ``close()`` (from any thread;
    the process keeps running).

    ``last_seq``: the number of the last output event read (pass it as ``after`` to read only what follows);
    ``process``: the process as its last ``start`` or ``exit`` event showed it.
    """

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        super().__init__(response, process_events())
        self.last_seq = 0
        self.process: Optional[ProcessInfo] = None

    def _seen(self, event: ProcessEvent) -> None:
        if isinstance(event.seq, int):
            self.last_seq = event.seq
        if event.process is not None:
            self.process = event.process


class FileWatchStream(_NdjsonStream[FileWatchEvent]):
    """The changes under a directory of a session's VM, read from the NDJSON answer of a watch:
    ``sandboxd.models.FileWatchEvent`` objects with ``type``. ``start`` comes first (``path``, ``recursive``:
    the watch is in place, every later change is reported); then ``create``, ``write``, ``remove``, ``rename``
    (the old name; the new one comes as a ``create``) and ``chmod`` with ``path`` and ``is_dir``, ``overflow``
    (the guest dropped events), ``error`` (``message``). It ends after ``end`` (``path``, ``message``: the
    directory was removed or moved away, or the watch failed), when the server ends the answer, or on
    ``close()`` (from any thread): the watch lasts until then, so use it in a ``with`` block, or close it.
    """

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        super().__init__(response, file_watch_events())


class RunEventStream(_NdjsonStream[Dict[str, Any]]):
    """The events of a streamed execute (``POST /execute`` asked for NDJSON), as plain dicts with ``type``:
    ``start`` (``execution_id``, ``session_id``), ``stdout``/``stderr`` (``data``), ``dropped``
    (``characters``), then one of ``end`` (``execution``), ``timeout`` or ``error`` (``status``, ``code``,
    ``detail``), the last. It ends after that, when the server ends the answer, or on ``close()`` (from any
    thread; the run goes on).
    """

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        super().__init__(response, run_events())


def deliver(callback: Optional[OnOutput], text: str) -> None:
    """Hands a piece of output to the caller's callback (when there is one)."""
    if callback is not None:
        callback(text)
