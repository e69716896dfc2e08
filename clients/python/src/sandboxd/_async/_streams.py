"""The live event stream for the asyncio client: ``async for event in stream``.

Hand-written: the lines are read by the sync ``EventStream`` in one of the client's worker threads (the
standard library has no asyncio HTTP client); ``aclose()`` shuts the connection, which ends a read under way.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from .._http import StreamedResponse
from .._sse import StreamedEvent
from .._sync._streams import EventStream

__all__ = ["AsyncEventStream", "StreamedEvent"]


class AsyncEventStream:
    """Yields events until the server ends the stream or ``aclose()`` is called.

    Use it in an ``async with`` block, or close it: it holds a connection (and, while reading, a thread).
    """

    def __init__(self, response: StreamedResponse, transport: Any) -> None:
        self._inner = EventStream(response)
        self._transport = transport

    @property
    def last_event_id(self) -> Optional[str]:
        return self._inner.last_event_id

    def __aiter__(self) -> "AsyncEventStream":
        return self

    async def __anext__(self) -> StreamedEvent:
        loop = asyncio.get_running_loop()
        try:
            event = await loop.run_in_executor(self._transport.pool.executor(), self._inner.next_event)
        except asyncio.CancelledError:
            self._inner.close()
            raise
        if event is None:
            raise StopAsyncIteration
        return event

    async def aclose(self) -> None:
        self._inner.close()

    async def __aenter__(self) -> "AsyncEventStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
