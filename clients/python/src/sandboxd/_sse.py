"""Server-Sent Events, without I/O: lines in, events out (the parts of the WHATWG rules a client needs)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, List, Optional


@dataclass(frozen=True)
class StreamedEvent:
    """One event of ``GET /v1/events/stream``."""

    #: The outbox id: pass the last one seen as ``last_event_id`` to resume after it.
    id: str
    #: The event type, e.g. ``vm.started``.
    event: str
    #: The parsed ``data:`` (the event's JSON envelope), or the raw text when it is not JSON.
    data: Any


@dataclass
class SseParser:
    last_id: str = ""
    _event: str = "message"
    _data: List[str] = field(default_factory=list)

    def feed_line(self, line: str) -> Optional[StreamedEvent]:
        """One line without its line break; answers an event when the line ends one."""
        if line == "":
            if not self._data:
                self._event = "message"
                return None
            text = "\n".join(self._data)
            try:
                data: Any = json.loads(text)
            except ValueError:
                data = text
            event = StreamedEvent(self.last_id, self._event, data)
            self._event, self._data = "message", []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "id":
            self.last_id = value
        elif name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None
