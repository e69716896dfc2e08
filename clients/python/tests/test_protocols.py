"""What the terminals' WebSocket handshake sends, the line splitting of streamed answers, and the Server-Sent
Events parser, without a network."""

from __future__ import annotations

import unittest

from _support import sandboxd
from sandboxd._async._terminal import handshake_headers, websocket_url
from sandboxd._http import Settings
from sandboxd._lines import LineBuffer, process_events
from sandboxd._sse import SseParser


class WebSocketHandshake(unittest.TestCase):
    def test_the_handshake_carries_the_key_in_a_header_never_in_the_url(self) -> None:
        settings = Settings("https://api.example.com/prefix", "sbx_sk_secret", None, 300.0, 3, 1.0)
        path = "/v1/sessions/s/pty/sessions/pty-1/connect"
        url = websocket_url(settings, path)
        self.assertEqual(url, "wss://api.example.com/prefix/v1/sessions/s/pty/sessions/pty-1/connect")
        self.assertNotIn("sbx_sk_secret", url)
        headers = handshake_headers(settings, path)
        self.assertEqual(headers["x-api-key"], "sbx_sk_secret")
        self.assertTrue(headers["user-agent"].startswith("sandboxd-python/"))
        self.assertNotIn("accept", headers)
        plain = Settings("http://127.0.0.1:8080", None, "tok", 300.0, 3, 1.0)
        self.assertEqual(websocket_url(plain, "/x"), "ws://127.0.0.1:8080/x")
        self.assertEqual(handshake_headers(plain, "/x")["authorization"], "Bearer tok")


class StreamedLines(unittest.TestCase):
    def test_lines_split_across_chunks_and_a_cut_off_last_line_is_dropped(self) -> None:
        buffer = LineBuffer()
        stream = b'{"type":"stdout","seq":1,"data":"a"}\r\n\n{"type":"exit","process":{"process_id":"p"}}\n{"type"'
        lines = []
        for i in range(0, len(stream), 5):
            lines += buffer.feed(stream[i : i + 5])
        self.assertEqual(len(lines), 3, lines)
        decoder = process_events()
        events = [e for e in (decoder.decode(line) for line in lines) if e is not None]
        self.assertEqual([e.type for e in events], ["stdout", "exit"])
        self.assertIsInstance(events[0], sandboxd.models.ProcessEvent)
        self.assertEqual((events[0].seq, events[0]["data"]), (1, "a"))
        self.assertEqual(events[1].process.process_id, "p")
        self.assertTrue(decoder.ended)
        with self.assertRaises(sandboxd.SandboxdError):
            decoder.decode(b"not json")


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
