"""Streamed answers without I/O: bytes in, lines out (``LineBuffer``), and NDJSON lines into typed events
(``NdjsonDecoder``). The sync and asyncio streams (``_sync/_streams.py``, ``_async/_streams.py``) read the
network and feed these, so both clients read a stream the same way.
"""

from __future__ import annotations

import json
import socket
from typing import Any, List, Optional, Tuple, Union

import httpx

from . import models
from ._model import convert
from .errors import SandboxdError

#: The media type of the NDJSON answers (``Accept`` asks for one).
NDJSON = "application/x-ndjson"


class LineBuffer:
    """Splits the chunks of an answer into lines (without their line break). A last line without one is never
    returned: it was cut off by a connection that broke."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> List[bytes]:
        data = self._pending + chunk
        lines = data.split(b"\n")
        self._pending = lines.pop()
        return [line[:-1] if line.endswith(b"\r") else line for line in lines]


class NdjsonDecoder:
    """The events of an NDJSON answer: each line a JSON object, made into the stream's model; an empty line is a
    keep-alive. ``ended`` turns true after an event of type ``last_type`` (the stream's last; a tuple when it
    may end in more than one way)."""

    def __init__(self, name: str, model: Any, last_type: Union[str, Tuple[str, ...]]) -> None:
        #: What the stream is, in the error about a line that is not JSON.
        self.name = name
        self.model = model
        self.last_types = (last_type,) if isinstance(last_type, str) else last_type
        self.ended = False

    def decode(self, line: bytes) -> Optional[Any]:
        """The event of a line, or None for a keep-alive (or anything that is not an object)."""
        text = line.strip()
        if not text:
            return None
        try:
            value = json.loads(text.decode("utf-8"))
        except ValueError as error:
            raise SandboxdError(f"{self.name} sent a line that is not JSON: {text[:200]!r}") from error
        if not isinstance(value, dict):
            return None
        if value.get("type") in self.last_types:
            self.ended = True
        return convert(value, self.model)


def process_events() -> NdjsonDecoder:
    return NdjsonDecoder("a process output stream", models.ProcessEvent, "exit")


def run_events() -> NdjsonDecoder:
    """The events of a streamed execute, as plain dicts (the document names no model for them): ``end``,
    ``timeout`` and ``error`` are each the last."""
    return NdjsonDecoder("a streamed execute", Any, ("end", "timeout", "error"))


def file_watch_events() -> NdjsonDecoder:
    return NdjsonDecoder("a file watch stream", models.FileWatchEvent, "end")


def shut_down(response: httpx.Response) -> None:
    """Ends a read of ``response`` under way, from any thread or task: the socket is shut down, so the blocked
    read returns at once (closing the socket from another thread would not wake it)."""
    stream = response.extensions.get("network_stream")
    sock = stream.get_extra_info("socket") if stream is not None else None
    # A socket.socket (sync), or asyncio's TransportSocket around one (asyncio): both can shut down.
    shutdown = getattr(sock, "shutdown", None)
    if shutdown is not None:
        try:
            shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
