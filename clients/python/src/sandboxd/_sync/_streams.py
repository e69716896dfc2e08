"""The streamed answers of the sync client: the live event stream (``GET /v1/events/stream``, Server-Sent
Events) and a background process's output (NDJSON), each an iterator.

Hand-written (``_async/_streams.py`` reads the same streams in a worker thread for asyncio).
"""

from __future__ import annotations

import http.client
import json
from typing import Any, Callable, Optional

from .._http import StreamedResponse
from ..models import ProcessEvent, ProcessInfo
from .._sse import SseParser, StreamedEvent
from ..errors import SandboxdError

__all__ = ["EventStream", "StreamedEvent", "ProcessEventStream", "OnOutput", "deliver"]

#: Called with each piece of a process's output (text, as it arrives).
OnOutput = Callable[[str], None]


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


class ProcessEventStream:
    """The events of a background process's output, read from its NDJSON answer: dicts with ``type``
    (``start``, ``stdout``, ``stderr``, ``dropped``, ``exit``) as ``sandboxd.models.ProcessEvent`` says. It ends
    after the ``exit`` event, when the server ends the answer (a stream that does not follow), or on ``close()``
    (from any thread; the process keeps running).

    ``last_seq``: the number of the last output event read (pass it as ``after`` to read only what follows);
    ``process``: the process as its last ``start`` or ``exit`` event showed it.
    """

    def __init__(self, response: StreamedResponse, transport: Any = None) -> None:
        self._response = response
        self._done = False
        self.last_seq = 0
        self.process: Optional[ProcessInfo] = None

    def __iter__(self) -> "ProcessEventStream":
        return self

    def __next__(self) -> ProcessEvent:
        event = self.next_event()
        if event is None:
            raise StopIteration
        return event

    def next_event(self) -> Optional[ProcessEvent]:
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
                raise SandboxdError(f"a process output stream sent a line that is not JSON: {line[:200]!r}") from error
            if not isinstance(event, dict):
                continue
            if isinstance(event.get("seq"), int):
                self.last_seq = event["seq"]
            if isinstance(event.get("process"), dict):
                self.process = event["process"]
            if event.get("type") == "exit":
                self.close()
            return event
        return None

    def close(self) -> None:
        if not self._done:
            self._done = True
            self._response.close()

    def __enter__(self) -> "ProcessEventStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def deliver(callback: Optional[OnOutput], text: str) -> None:
    """Hands a piece of output to the caller's callback (when there is one)."""
    if callback is not None:
        callback(text)
