"""Directory watches against a local ``http.server`` (no VMs): the request ``watch`` sends, the NDJSON answer read
event by event (keep-alives skipped; nothing read past ``end``), the stream ended by the server or by ``close()``
from another thread while a read waits, the errors raised by the call itself, and the asyncio stream."""

from __future__ import annotations

import http.server
import threading
import unittest
from typing import Any, Dict, List

from _support import sandboxd
from test_processes import send_ndjson
from test_transport import FakeServer, send_json

CHANGES: List[Any] = [
    {"type": "start", "path": "/root/app", "recursive": True},
    None,
    {"type": "create", "path": "/root/app/a.txt", "is_dir": False},
    {"type": "write", "path": "/root/app/a.txt", "is_dir": False},
    {"type": "overflow"},
    {"type": "remove", "path": "/root/app/a.txt", "is_dir": False},
    {"type": "end", "path": "/root/app", "message": "the directory was removed or moved away"},
    {"type": "create", "path": "/root/app/after-the-end", "is_dir": False},
]


def error(status: int, code: str) -> Any:
    return lambda handler, n: send_json(handler, status, {"error": f"{code} here", "code": code})


class FileWatchRequests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.client = sandboxd.Sandboxd(api_key="sbx_sk_test", base_url=self.fake.url, retry_delay=0.01)

    def test_the_changes_are_read_until_the_end_event(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, CHANGES)
        with self.client.files.watch("s-1", "app", recursive=True) as stream:
            self.assertIsInstance(stream, sandboxd.FileWatchStream)
            events = list(stream)
        seen = self.fake.seen[-1]
        self.assertEqual((seen.method, seen.path), ("GET", "/v1/sessions/s-1/files/watch?path=app&recursive=true"))
        self.assertEqual(seen.headers["accept"], "application/x-ndjson")
        self.assertEqual(
            [e["type"] for e in events], ["start", "create", "write", "overflow", "remove", "end"], "nothing after end"
        )
        self.assertEqual(events[1], {"type": "create", "path": "/root/app/a.txt", "is_dir": False})

    def test_the_session_verb_sends_the_same_request_and_the_stream_ends_with_the_answer(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, CHANGES[:3])
        session = self.client.sessions.connect("s-1")
        events = list(session.watch("/root/app"))
        self.assertEqual(self.fake.seen[-1].path, "/v1/sessions/s-1/files/watch?path=%2Froot%2Fapp&recursive=false")
        self.assertEqual([e["type"] for e in events], ["start", "create"])

    def test_close_from_another_thread_ends_a_read_that_waits(self) -> None:
        release = threading.Event()

        def reply(handler: http.server.BaseHTTPRequestHandler, n: int) -> None:
            send_ndjson(handler, CHANGES[:1], complete=False)
            release.wait(10)  # the watch goes on: no more lines, no end

        self.fake.reply = reply
        stream = self.client.files.watch("s-1", "app")
        try:
            self.assertEqual(next(stream)["type"], "start")
            timer = threading.Timer(0.2, stream.close)
            timer.start()
            self.assertIsNone(stream.next_event(), "ended by close()")
            self.assertEqual(list(stream), [])
        finally:
            release.set()
            stream.close()

    def test_errors_come_from_the_call_before_any_event(self) -> None:
        cases: List[Dict[str, Any]] = [
            {"reply": error(404, "NOT_FOUND"), "raises": sandboxd.NotFoundError, "status": 404},
            {"reply": error(409, "CONFLICT"), "raises": sandboxd.SandboxdError, "status": 409},
            {"reply": error(429, "QUOTA_EXCEEDED"), "raises": sandboxd.QuotaExceededError, "status": 429},
        ]
        for case in cases:
            self.fake.reply = case["reply"]
            with self.assertRaises(case["raises"]) as caught:
                self.client.files.watch("s-1", "app")
            self.assertEqual(caught.exception.status, case["status"])
        self.assertEqual(len(self.fake.seen), 3, "none of them retried")


class AsyncFileWatchRequests(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    async def test_the_changes_are_iterated_and_errors_come_from_the_call(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, CHANGES)
        async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url) as client:
            session = client.sessions.connect("s-1")
            stream = await session.watch("app", recursive=True)
            self.assertIsInstance(stream, sandboxd.AsyncFileWatchStream)
            async with stream:
                types = [event["type"] async for event in stream]
            self.assertEqual(types, ["start", "create", "write", "overflow", "remove", "end"])
            self.assertEqual(self.fake.seen[-1].path, "/v1/sessions/s-1/files/watch?path=app&recursive=true")
            self.fake.reply = error(404, "NOT_FOUND")
            with self.assertRaises(sandboxd.NotFoundError):
                await client.files.watch("s-1", "missing")


if __name__ == "__main__":
    unittest.main()
