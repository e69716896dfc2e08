"""The WebSocket protocol (RFC 6455) for terminals, without I/O: the handshake, frames in and out, and the
terminal's control messages. The standard library has no WebSocket client, so the package has this small
one; ``_sync/_terminal.py`` drives it over a ``socket`` (with a reader thread) and ``_async/_terminal.py``
over ``asyncio`` streams. Only what a client needs: masked frames out, unmasked frames in, fragmentation,
ping/pong, the closing handshake; no extensions (no compression), no subprotocols.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import struct
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ._http import Settings, headers_for, split_base_url, Request
from .errors import NetworkError, SandboxdError, error_for

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
OP_CONTINUATION, OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
#: The largest message accepted from the server (terminal output comes in small chunks anyway).
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: The largest handshake answer read (headers and an error body).
MAX_HANDSHAKE_BYTES = 64 * 1024


@dataclass(frozen=True)
class TerminalExit:
    """How a terminal's program ended."""

    exit_code: Optional[int]
    signal: Optional[str]


class WebSocketTarget:
    """Where and how to open the WebSocket of a terminal: host, port, TLS, the request target and the headers."""

    def __init__(self, settings: Settings, path: str, operation: str):
        scheme, host, port, prefix = split_base_url(settings.base_url)
        self.host = host
        self.port = port
        self.tls = scheme == "https"
        self.target = prefix + path
        self.operation = operation
        self.key = base64.b64encode(os.urandom(16)).decode("ascii")
        default_port = 443 if self.tls else 80
        host_header = host if port == default_port else f"{host}:{port}"
        if ":" in host and not host.startswith("["):
            host_header = f"[{host}]" if port == default_port else f"[{host}]:{port}"
        # The credentials go in headers, as for every request (the server accepts X-API-Key on the handshake):
        # no key or token in the URL.
        headers = headers_for(settings, Request("GET", path))
        headers.pop("accept", None)
        lines = [f"GET {self.target} HTTP/1.1", f"Host: {host_header}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        lines += [
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {self.key}",
            "Sec-WebSocket-Version: 13",
        ]
        self.request = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8")


def parse_handshake(head: bytes) -> Tuple[int, str, Dict[str, str]]:
    """Status, reason and headers (lower-case names) of the answer's head (up to the blank line)."""
    text = head.decode("iso-8859-1")
    lines = text.split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise NetworkError(f"not an HTTP answer to the WebSocket handshake: {lines[0][:100]!r}")
    headers: Dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), parts[2] if len(parts) > 2 else "", headers


def check_accept(target: WebSocketTarget, headers: Mapping[str, str]) -> None:
    expected = base64.b64encode(hashlib.sha1((target.key + GUID).encode("ascii")).digest()).decode("ascii")
    if headers.get("sec-websocket-accept") != expected:
        raise NetworkError(f"{target.operation}: the server did not accept the WebSocket handshake properly")
    if headers.get("upgrade", "").lower() != "websocket":
        raise NetworkError(f"{target.operation}: the server answered 101 without Upgrade: websocket")


def handshake_error(
    target: WebSocketTarget, status: int, reason: str, headers: Mapping[str, str], body: bytes
) -> SandboxdError:
    """The error for a refused handshake, from the same table as every answer (401, 404, 410 VM_GONE…)."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed: Any = json.loads(text) if text else None
    except ValueError:
        parsed = None
    fields = parsed if isinstance(parsed, dict) else {}
    code = fields.get("code") if isinstance(fields.get("code"), str) else None
    detail = fields.get("detail")
    message = (
        detail
        if isinstance(detail, str)
        else f"{target.operation}: the WebSocket handshake answered {status} {reason}".strip()
    )
    return error_for(
        status,
        code,
        None,
        message,
        body=parsed if parsed is not None else text,
        operation=target.operation,
        request_id=headers.get("x-request-id"),
    )


def encode_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """A client frame: always masked (RFC 6455 §5.3)."""
    header = bytearray([(0x80 if fin else 0) | opcode])
    length = len(payload)
    if length < 126:
        header.append(0x80 | length)
    elif length < 1 << 16:
        header.append(0x80 | 126)
        header += struct.pack("!H", length)
    else:
        header.append(0x80 | 127)
        header += struct.pack("!Q", length)
    mask = os.urandom(4)
    header += mask
    return bytes(header) + _mask(payload, mask)


def _mask(payload: bytes, mask: bytes) -> bytes:
    if not payload:
        return b""
    # XOR with the 4-byte mask repeated, as one big integer operation (fast enough without numpy).
    repeated = (mask * (len(payload) // 4 + 1))[: len(payload)]
    return (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(len(payload), "big")


def close_payload(code: int = 1000, reason: str = "") -> bytes:
    return struct.pack("!H", code) + reason.encode("utf-8")[:123]


@dataclass
class Message:
    """A whole message from the server: ``kind`` is "text", "binary", "close", "ping" or "pong"."""

    kind: str
    data: bytes
    close_code: Optional[int] = None
    close_reason: str = ""


class FrameParser:
    """Turns bytes from the server into whole messages (control frames may come between fragments)."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._fragments: List[bytes] = []
        self._fragment_opcode: Optional[int] = None
        self._fragment_size = 0

    def feed(self, data: bytes) -> List[Message]:
        self._buffer += data
        messages: List[Message] = []
        while True:
            frame = self._next_frame()
            if frame is None:
                return messages
            fin, opcode, payload = frame
            if opcode >= 0x8:
                if not fin or len(payload) > 125:
                    raise NetworkError("the server sent a malformed WebSocket control frame")
                if opcode == OP_CLOSE:
                    code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                    messages.append(Message("close", payload, code, payload[2:].decode("utf-8", errors="replace")))
                elif opcode == OP_PING:
                    messages.append(Message("ping", payload))
                elif opcode == OP_PONG:
                    messages.append(Message("pong", payload))
                else:
                    raise NetworkError(f"the server sent an unknown WebSocket control frame ({opcode:#x})")
                continue
            if opcode == OP_CONTINUATION:
                if self._fragment_opcode is None:
                    raise NetworkError("the server sent a WebSocket continuation frame without a first fragment")
            elif opcode in (OP_TEXT, OP_BINARY):
                if self._fragment_opcode is not None:
                    raise NetworkError("the server began a WebSocket message inside another")
                self._fragment_opcode = opcode
            else:
                raise NetworkError(f"the server sent an unknown WebSocket frame ({opcode:#x})")
            self._fragments.append(payload)
            self._fragment_size += len(payload)
            if self._fragment_size > MAX_MESSAGE_BYTES:
                raise NetworkError(f"the server sent a WebSocket message over {MAX_MESSAGE_BYTES} bytes")
            if fin:
                whole = b"".join(self._fragments)
                kind = "text" if self._fragment_opcode == OP_TEXT else "binary"
                self._fragments, self._fragment_opcode, self._fragment_size = [], None, 0
                messages.append(Message(kind, whole))

    def _next_frame(self) -> Optional[Tuple[bool, int, bytes]]:
        buffer = self._buffer
        if len(buffer) < 2:
            return None
        fin = bool(buffer[0] & 0x80)
        if buffer[0] & 0x70:
            raise NetworkError("the server sent a WebSocket frame with reserved bits set (no extension was agreed)")
        opcode = buffer[0] & 0x0F
        masked = bool(buffer[1] & 0x80)
        length = buffer[1] & 0x7F
        offset = 2
        if length == 126:
            if len(buffer) < 4:
                return None
            length = struct.unpack("!H", buffer[2:4])[0]
            offset = 4
        elif length == 127:
            if len(buffer) < 10:
                return None
            length = struct.unpack("!Q", buffer[2:10])[0]
            offset = 10
        if length > MAX_MESSAGE_BYTES:
            raise NetworkError(f"the server sent a WebSocket frame over {MAX_MESSAGE_BYTES} bytes")
        mask = b""
        if masked:
            if len(buffer) < offset + 4:
                return None
            mask = bytes(buffer[offset : offset + 4])
            offset += 4
        if len(buffer) < offset + length:
            return None
        payload = bytes(buffer[offset : offset + length])
        del buffer[: offset + length]
        return fin, opcode, _mask(payload, mask) if masked else payload


def resize_message(cols: int, rows: int) -> bytes:
    return encode_frame(OP_TEXT, json.dumps({"type": "resize", "cols": cols, "rows": rows}).encode("utf-8"))


def parse_control(text: bytes) -> Optional[Dict[str, Any]]:
    """A text frame of the terminal protocol: ``{"type": "exit", "exit_code", "signal"}`` or ``{"type": "error"}``."""
    try:
        value = json.loads(text.decode("utf-8"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
