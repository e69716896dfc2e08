"""The streamed answers of the asyncio client: the live event stream (``async for event in stream``), a
background process's output and a directory watch.

Hand-written: the lines are read by the sync client's streams (``_sync/_streams.py``) in one of the client's
worker threads (the standard library has no asyncio HTTP client); ``aclose()`` shuts the connection, which ends a
read under way.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any, Awaitable, Callable, Generic, Optional, TypeVar, Union

from .._http import StreamedResponse
from ..models import FileWatchEvent, ProcessEvent, ProcessInfo
from .._sse import StreamedEvent
from .._sync._streams import EventStream, FileWatchStream, ProcessEventStream

__all__ = [
    "AsyncEventStream",
    "StreamedEvent",
    "AsyncProcessEventStream",
    "AsyncFileWatchStream",
    "OnOutput",
    "deliver",
]

#: Called with each piece of a process's output (text, as it arrives): a function or a coroutine function.
OnOutput = Callable[[str], Union[None, Awaitable[None]]]

T = TypeVar("T")
S = TypeVar("S", bound="_AsyncStream[Any]")


async def _next_of(transport: Any, read: Callable[[], Optional[T]], close: Callable[[], None]) -> Optional[T]:
    """``read()`` in one of the client's worker threads; cancelling the awaiting task closes the stream."""
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(transport.pool.executor(), read)
    except asyncio.CancelledError:
        close()
        raise


class _AsyncStream(Generic[T]):
    """What the streams share: the sync stream ``inner`` read in a worker thread, iteration, closing."""

    def __init__(self, inner: Any, transport: Any) -> None:
        self._inner = inner
        self._transport = transport

    def __aiter__(self: S) -> S:
        return self

    async def __anext__(self) -> T:
        event = await _next_of(self._transport, self._inner.next_event, self._inner.close)
        if event is None:
            raise StopAsyncIteration
        return event

    async def aclose(self) -> None:
        self._inner.close()

    async def __aenter__(self: S) -> S:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class AsyncEventStream(_AsyncStream[StreamedEvent]):
    """Yields events until the server ends the stream or ``aclose()`` is called.

    Use it in an ``async with`` block, or close it: it holds a connection (and, while reading, a thread).
    """

    def __init__(self, response: StreamedResponse, transport: Any) -> None:
        super().__init__(EventStream(response), transport)

    @property
    def last_event_id(self) -> Optional[str]:
        return self._inner.last_event_id


class AsyncProcessEventStream(_AsyncStream[ProcessEvent]):
    """The events of a background process's output (dicts, as ``sandboxd.models.ProcessEvent`` says), read from
    its NDJSON answer. It ends after the ``exit`` event, when the server ends the answer, or on ``aclose()`` (the
    process keeps running).

    ``last_seq``: the number of the last output event read (pass it as ``after`` to read only what follows);
    ``process``: the process as its last ``start`` or ``exit`` event showed it. Use it in an ``async with``
    block, or close it: it holds a connection (and, while reading, a thread).
    """

    def __init__(self, response: StreamedResponse, transport: Any) -> None:
        super().__init__(ProcessEventStream(response), transport)

    @property
    def last_seq(self) -> int:
        return self._inner.last_seq

    @property
    def process(self) -> Optional[ProcessInfo]:
        return self._inner.process


class AsyncFileWatchStream(_AsyncStream[FileWatchEvent]):
    """The changes under a directory of a session's VM (dicts, as ``sandboxd.models.FileWatchEvent`` says), read
    from the NDJSON answer of a watch: ``start`` first (the watch is in place), then ``create``, ``write``,
    ``remove``, ``rename``, ``chmod``, ``overflow`` and ``error`` events. It ends after ``end`` (the directory was
    removed or moved away, or the watch failed), when the server ends the answer, or on ``aclose()``: the watch
    lasts until then, so use it in an ``async with`` block, or close it (it holds a connection and, while
    reading, a thread).
    """

    def __init__(self, response: StreamedResponse, transport: Any) -> None:
        super().__init__(FileWatchStream(response), transport)


async def deliver(callback: Optional[OnOutput], text: str) -> None:
    """Hands a piece of output to the caller's callback (when there is one), awaiting what a coroutine function
    returns."""
    if callback is not None:
        result = callback(text)
        if inspect.isawaitable(result):
            await result
