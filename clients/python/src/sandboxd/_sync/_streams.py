"""The streamed answers of the sync client: the live event stream (``GET /v1/events/stream``, Server-Sent
Events), a background process's output and a directory watch (NDJSON), each an iterator.

Hand-written (``_async/_streams.py`` reads the same streams in a worker thread for asyncio).
"""

from __future__ import annotations

import http.client
import json
from typing import Any, Callable, Dict, Generic, Optional, TypeVar, cast

from .._http import StreamedResponse
from ..models import FileWatchEvent, ProcessEvent, ProcessInfo
from .._sse import SseParser, StreamedEvent
from ..errors import SandboxdError

__all__ = ["EventStream", "StreamedEvent", "ProcessEventStream", "FileWatchStream", "OnOutput", "deliver"]

#: Called with each piece of a process's output (text, as it arrives).
OnOutput = Callable[[str], None]

T = TypeVar("T")
S = TypeVar("S", bound="_NdjsonStream[Any]")


class EventStream:
    """Yields events until the server ends the stream or ``close()`` is called (from any thread).

    Use it in a ``with`` block, or close it: it holds a connection open. ``last_event_id`` is the id of the
    last event read (pass it to ``events.stream()`` to resume after a disconnection).
    """

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        self._response = response
        self._parser = SseParser()
        self._done = False

    @property
    def last_event_id(self) -> Optional[str]:
        return self._parser.last_id or None

    def __iter__(self) -> "EventStream":
        return self

    def __next__(self) -> StreamedEvent:
        event = self.next_event()
        if event is None:
            raise StopIteration
        return event

    def next_event(self) -> Optional[StreamedEvent]:
        """The next event, or None once the stream ended."""
        while not self._done:
            try:
                raw = self._response.readline()
            except (OSError, ValueError, AttributeError):
                raw = b""
            if not raw:
                self.close()
                return None
            event = self._parser.feed_line(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
            if event is not None:
                return event
        return None

    def close(self) -> None:
        if not self._done:
            self._done = True
            self._response.close()

    def __enter__(self) -> "EventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _NdjsonStream(Generic[T]):
    """What the NDJSON streams share: the answer read line by line (an empty line is a keep-alive), each line a
    JSON object. The stream ends after its last event (``_last_type``), when the server ends the answer, or on
    ``close()`` (from any thread)."""

    #: What the stream is, in the error about a line that is not JSON.
    _name = "an NDJSON stream"
    #: The ``type`` of the event after which the stream ends.
    _last_type = ""

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        self._response = response
        self._done = False

    def __iter__(self: S) -> S:
        return self

    def __next__(self) -> T:
        event = self.next_event()
        if event is None:
            raise StopIteration
        return event

    def next_event(self) -> Optional[T]:
        """The next event, or None once the stream ended."""
        while not self._done:
            try:
                raw = self._response.readline()
            except (OSError, ValueError, AttributeError, http.client.HTTPException):
                raw = b""  # closed, or broken off (a chunked answer cut short is an IncompleteRead)
            if not raw.endswith(b"\n"):
                # The end of the answer, or a line cut off by a connection that broke.
                self.close()
                return None
            line = raw.strip()
            if not line:
                continue  # a keep-alive
            try:
                event = json.loads(line.decode("utf-8"))
            except ValueError as error:
                self.close()
                raise SandboxdError(f"{self._name} sent a line that is not JSON: {line[:200]!r}") from error
            if not isinstance(event, dict):
                continue
            self._seen(event)
            if event.get("type") == self._last_type:
                self.close()
            return cast(T, event)
        return None

    def _seen(self, event: Dict[str, Any]) -> None:
        """Called with each event before it is returned."""

    def close(self) -> None:
        if not self._done:
            self._done = True
            self._response.close()

    def __enter__(self: S) -> S:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ProcessEventStream(_NdjsonStream[ProcessEvent]):
    """The events of a background process's output, read from its NDJSON answer: dicts with ``type``
    (``start``, ``stdout``, ``stderr``, ``dropped``, ``exit``) as ``sandboxd.models.ProcessEvent`` says. It ends
    after the ``exit`` event, when the server ends the answer (a stream that does not follow), or on ``close()``
    (from any thread; the process keeps running).

    ``last_seq``: the number of the last output event read (pass it as ``after`` to read only what follows);
    ``process``: the process as its last ``start`` or ``exit`` event showed it.
    """

    _name = "a process output stream"
    _last_type = "exit"

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        super().__init__(response, transport)
        self.last_seq = 0
        self.process: Optional[ProcessInfo] = None

    def _seen(self, event: Dict[str, Any]) -> None:
        if isinstance(event.get("seq"), int):
            self.last_seq = event["seq"]
        if isinstance(event.get("process"), dict):
            self.process = cast(ProcessInfo, event["process"])


class FileWatchStream(_NdjsonStream[FileWatchEvent]):
    """The changes under a directory of a session's VM, read from the NDJSON answer of a watch: dicts with
    ``type`` as ``sandboxd.models.FileWatchEvent`` says. ``start`` comes first (``path``, ``recursive``: the watch
    is in place, every later change is reported); then ``create``, ``write``, ``remove``, ``rename`` (the old
    name; the new one comes as a ``create``) and ``chmod`` with ``path`` and ``is_dir``, ``overflow`` (the guest
    dropped events), ``error`` (``message``). It ends after ``end`` (``path``, ``message``: the directory was
    removed or moved away, or the watch failed), when the server ends the answer, or on ``close()`` (from any
    thread): the watch lasts until then, so use it in a ``with`` block, or close it.
    """

    _name = "a file watch stream"
    _last_type = "end"


def deliver(callback: Optional[OnOutput], text: str) -> None:
    """Hands a piece of output to the caller's callback (when there is one)."""
    if callback is not None:
        callback(text)
