# Generated from sandboxd/_async/resources/events.py by scripts/unasync.py: do not edit.
"""GET /v1/events/stream: your events live, as Server-Sent Events."""

from __future__ import annotations

from typing import Optional, Union

from .._streams import EventStream
from ..transport import Transport


class Events:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def stream(self, *, last_event_id: Optional[Union[str, int]] = None, all: bool = False) -> EventStream:
        """Opens the stream: iterate it for events until the server ends it or you close it.

        ``last_event_id``: resume after this event (the stream first replays what came after it); without it the
        stream starts with the next event. ``all=True``: every user's events (administrators only).
        """
        headers = {"accept": "text/event-stream"}
        if last_event_id is not None:
            headers["last-event-id"] = str(last_event_id)
        response = self._transport.request(
            "GET",
            "/v1/events/stream",
            query={"all": True if all else None},
            headers=headers,
            response_type="stream",
        )
        return EventStream(response, self._transport)
