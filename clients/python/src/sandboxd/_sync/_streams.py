"""The live event stream for the sync client: an iterator over ``GET /v1/events/stream``.

Hand-written (``_async/_streams.py`` reads the same stream in a worker thread for asyncio).
"""

from __future__ import annotations

from typing import Any, Optional

from .._http import StreamedResponse
from .._sse import SseParser, StreamedEvent

__all__ = ["EventStream", "StreamedEvent"]


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
