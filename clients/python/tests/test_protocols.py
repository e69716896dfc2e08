"""The WebSocket framing (RFC 6455) and the Server-Sent Events parser, without a network."""

from __future__ import annotations

import json
import os
import struct
import unittest

from _support import sandboxd
from sandboxd._http import Settings
from sandboxd._sse import SseParser
from sandboxd._websocket import (
    OP_BINARY,
    OP_PING,
    OP_TEXT,
    FrameParser,
    WebSocketTarget,
    encode_frame,
    parse_handshake,
)


def server_frame(opcode: int, payload: bytes, fin: bool = True) -> bytes:
    """An unmasked frame, as a server sends it."""
    head = bytes([(0x80 if fin else 0) | opcode])
    if len(payload) < 126:
        head += bytes([len(payload)])
    elif len(payload) < 65536:
        head += bytes([126]) + struct.pack("!H", len(payload))
    else:
        head += bytes([127]) + struct.pack("!Q", len(payload))
    return head + payload


def unmask(frame: bytes) -> bytes:
    length = frame[1] & 0x7F
    offset = 2 + (2 if length == 126 else 8 if length == 127 else 0)
    mask, data = frame[offset : offset + 4], frame[offset + 4 :]
    return bytes(b ^ mask[i % 4] for i, b in enumerate(data))


class WebSocketFrames(unittest.TestCase):
    def test_client_frames_are_masked_with_every_length_form(self) -> None:
        for size in (0, 5, 125, 126, 65535, 65536, 200_000):
            payload = os.urandom(size)
            frame = encode_frame(OP_BINARY, payload)
            self.assertEqual(frame[0], 0x80 | OP_BINARY)
            self.assertTrue(frame[1] & 0x80, "masked")
            self.assertEqual(unmask(frame), payload, size)

    def test_the_parser_reads_split_fragmented_and_control_frames(self) -> None:
        parser = FrameParser()
        stream = (
            server_frame(OP_BINARY, b"abc")
            + server_frame(OP_TEXT, b'{"type":', fin=False)
            + server_frame(OP_PING, b"hi")
            + server_frame(0x0, b'"exit","exit_code":4}')
            + server_frame(OP_BINARY, os.urandom(70_000))
            + server_frame(0x8, struct.pack("!H", 1000) + b"bye")
        )
        messages = []
        for i in range(0, len(stream), 7):  # a byte at a time would do too; 7 crosses every boundary
            messages += parser.feed(stream[i : i + 7])
        self.assertEqual([m.kind for m in messages], ["binary", "ping", "text", "binary", "close"])
        self.assertEqual(messages[0].data, b"abc")
        self.assertEqual(json.loads(messages[2].data), {"type": "exit", "exit_code": 4})
        self.assertEqual(len(messages[3].data), 70_000)
        self.assertEqual((messages[4].close_code, messages[4].close_reason), (1000, "bye"))

    def test_the_handshake_carries_the_key_in_a_header_never_in_the_url(self) -> None:
        settings = Settings("https://api.example.com/prefix", "sbx_sk_secret", None, 300.0, 3, 1.0)
        target = WebSocketTarget(settings, "/v1/sessions/s/pty/sessions/pty-1/connect", "attach")
        request = target.request.decode()
        self.assertTrue(request.startswith("GET /prefix/v1/sessions/s/pty/sessions/pty-1/connect HTTP/1.1\r\n"))
        self.assertIn("\r\nx-api-key: sbx_sk_secret\r\n", request)
        self.assertNotIn("sbx_sk_secret", request.split("\r\n")[0])
        self.assertIn("\r\nHost: api.example.com\r\n", request)
        self.assertIn("\r\nSec-WebSocket-Version: 13\r\n", request)
        self.assertEqual((target.host, target.port, target.tls), ("api.example.com", 443, True))
        status, reason, headers = parse_handshake(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket")
        self.assertEqual((status, reason, headers), (101, "Switching Protocols", {"upgrade": "websocket"}))


class ServerSentEvents(unittest.TestCase):
    def test_events_comments_and_multi_line_data(self) -> None:
        parser = SseParser()
        lines = [
            "retry: 2000",
            ": following events after 3",
            "",
            "id: 4",
            "event: vm.started",
            'data: {"type":"vm.started",',
            'data: "id":"evt_1"}',
            "",
            ": keep-alive",
            "",
            "id: 5",
            "data: not json",
            "",
        ]
        events = [e for e in (parser.feed_line(line) for line in lines) if e is not None]
        self.assertEqual(
            events,
            [
                sandboxd.StreamedEvent("4", "vm.started", {"type": "vm.started", "id": "evt_1"}),
                sandboxd.StreamedEvent("5", "message", "not json"),
            ],
        )
        self.assertEqual(parser.last_id, "5")


if __name__ == "__main__":
    unittest.main()
