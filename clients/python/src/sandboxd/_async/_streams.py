"""The streamed answers of the asyncio client: the live event stream (``async for event in stream``), a
background process's output and a directory watch, read as they arrive (httpx, one pooled connection held
while the stream is open; no thread).

Hand-written (``_sync/_streams.py`` is the sync counterpart; both decode with ``_lines`` and ``_sse``).
Cancelling a task that awaits the next event closes the stream.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Generic, List, Optional, TypeVar, Union, cast

import httpx

from .._lines import LineBuffer, NdjsonDecoder, file_watch_events, process_events, run_events, shut_down
from ..models import FileWatchEvent, ProcessEvent, ProcessInfo
from .._sse import SseParser, StreamedEvent
from .transport import AsyncStreamedResponse

__all__ = [
    "AsyncEventStream",
    "StreamedEvent",
    "AsyncProcessEventStream",
    "AsyncFileWatchStream",
    "AsyncRunEventStream",
    "OnOutput",
    "deliver",
]

#: Called with each piece of a process's output (text, as it arrives): a function or a coroutine function.
OnOutput = Callable[[str], Union[None, Awaitable[None]]]

T = TypeVar("T")
S = TypeVar("S", bound="_AsyncStream[Any]")


class _AsyncStream(Generic[T]):
    """What the streams share: the answer read line by line, closing, ``async with`` and ``async for``.

    Subclasses turn lines into events (``_event_of``)."""

    def __init__(self, response: AsyncStreamedResponse, transport: Any = None) -> None:
        self._response = response.response
        self._chunks: Optional[AsyncIterator[bytes]] = None
        self._lines = LineBuffer()
        self._ready: List[bytes] = []
        self._done = False
        self._reading = False
        #: Set by a subclass once the stream's last event was read.
        self._ended = False

    def __aiter__(self: S) -> S:
        return self

    async def __anext__(self) -> T:
        event = await self.next_event()
        if event is None:
            raise StopAsyncIteration
        return event

    async def _next_line(self) -> Optional[bytes]:
        while not self._ready:
            if self._done:
                return None
            self._reading = True
            try:
                if self._chunks is None:
                    self._chunks = self._response.aiter_bytes()
                chunk = await self._chunks.__anext__()
            except StopAsyncIteration:
                chunk = b""
            except (httpx.HTTPError, OSError, ValueError, AttributeError):
                chunk = b""  # closed, or broken off (an answer cut short)
            except asyncio.CancelledError:
                self._reading = False
                await self.aclose()
                raise
            self._reading = False
            if self._done:
                await self._response.aclose()  # aclose() left it to this task, which was inside it
                return None
            if not chunk:
                await self.aclose()
                return None
            self._ready = self._lines.feed(chunk)
        return self._ready.pop(0)

    async def next_event(self) -> Optional[T]:
        """The next event, or None once the stream ended."""
        while True:
            line = await self._next_line()
            if line is None:
                return None
            try:
                event = self._event_of(line)
            except Exception:
                await self.aclose()  # a stream that sends garbage is over
                raise
            if self._ended:
                await self.aclose()
            if event is not None:
                return event

    def _event_of(self, line: bytes) -> Optional[T]:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Ends the stream and gives its connection back (a read under way in another task returns)."""
        if self._done:
            return
        self._done = True
        if self._reading:
            shut_down(self._response)  # the reading task sees the end and closes the answer
            return
        await self._response.aclose()

    async def __aenter__(self: S) -> S:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AsyncEventStream(_AsyncStream[StreamedEvent]):
    """Yields events until the server ends the stream or ``aclose()`` is called.

    Use it in an ``async with`` block, or close it: it holds a connection.
    """

    def __init__(self, response: AsyncStreamedResponse, transport: Any = None) -> None:
        super().__init__(response, transport)
        self._parser = SseParser()

    @property
    def last_event_id(self) -> Optional[str]:
        return self._parser.last_id or None

    def _event_of(self, line: bytes) -> Optional[StreamedEvent]:
        return self._parser.feed_line(line.decode("utf-8", errors="replace"))


class _AsyncNdjsonStream(_AsyncStream[T]):
    def __init__(self, response: AsyncStreamedResponse, decoder: NdjsonDecoder) -> None:
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


class AsyncProcessEventStream(_AsyncNdjsonStream[ProcessEvent]):
    """The events of a background process's output (``sandboxd.models.ProcessEvent`` objects), read from its
    NDJSON answer. It ends after the ``exit`` event, when the server ends the answer, or on ``aclose()`` (the
    process keeps running).

    ``last_seq``: the number of the last output event read (pass it as ``after`` to read only what follows);
    ``process``: the process as its last ``start`` or ``exit`` event showed it. Use it in an ``async with``
    block, or close it: it holds a connection.
    """

    def __init__(self, response: AsyncStreamedResponse, transport: Any = None) -> None:
        super().__init__(response, process_events())
        self.last_seq = 0
        self.process: Optional[ProcessInfo] = None

    def _seen(self, event: ProcessEvent) -> None:
        if isinstance(event.seq, int):
            self.last_seq = event.seq
        if event.process is not None:
            self.process = event.process


class AsyncFileWatchStream(_AsyncNdjsonStream[FileWatchEvent]):
    """The changes under a directory of a session's VM (``sandboxd.models.FileWatchEvent`` objects), read from
    the NDJSON answer of a watch: ``start`` first (the watch is in place), then ``create``, ``write``,
    ``remove``, ``rename``, ``chmod``, ``overflow`` and ``error`` events. It ends after ``end`` (the directory
    was removed or moved away, or the watch failed), when the server ends the answer, or on ``aclose()``: the
    watch lasts until then, so use it in an ``async with`` block, or close it (it holds a connection).
    """

    def __init__(self, response: AsyncStreamedResponse, transport: Any = None) -> None:
        super().__init__(response, file_watch_events())


class AsyncRunEventStream(_AsyncNdjsonStream[Dict[str, Any]]):
    """The events of a streamed execute (``POST /execute`` asked for NDJSON), as plain dicts with ``type``:
    ``start`` (``execution_id``, ``session_id``), ``stdout``/``stderr`` (``data``), ``dropped``
    (``characters``), then one of ``end`` (``execution``), ``timeout`` or ``error`` (``status``, ``code``,
    ``detail``), the last. It ends after that, when the server ends the answer, or on ``aclose()`` (the run goes on).
    """

    def __init__(self, response: AsyncStreamedResponse, transport: Any = None) -> None:
        super().__init__(response, run_events())


async def deliver(callback: Optional[OnOutput], text: str) -> None:
    """Hands a piece of output to the caller's callback (when there is one), awaiting what a coroutine function
    returns."""
    if callback is not None:
        result = callback(text)
        if inspect.isawaitable(result):
            await result
