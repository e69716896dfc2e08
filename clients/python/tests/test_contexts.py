"""Python contexts against a local ``http.server`` (no VMs): the requests each method sends, and ``context_id`` on
execute sent only when given."""

from __future__ import annotations

import http.server
import json
import unittest
from typing import Any, Dict

from _support import sandboxd
from test_transport import FakeServer, send_json

CONTEXT: Dict[str, Any] = {
    "id": "ctx_1",
    "session_id": "s-1",
    "language": "python",
    "cwd": "/tmp",
    "created_at": "2024-01-01T00:00:00.000Z",
}


def no_content(handler: http.server.BaseHTTPRequestHandler, n: int) -> None:
    handler.send_response(204)
    handler.send_header("content-length", "0")
    handler.end_headers()


class ContextRequests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.fake.reply = lambda handler, n: send_json(handler, 200, CONTEXT)
        self.client = sandboxd.Sandboxd(api_key="sbx_sk_test", base_url=self.fake.url, retry_delay=0.01)

    def sent(self) -> Any:
        seen = self.fake.seen[-1]
        return seen.method, seen.path, json.loads(seen.body) if seen.body else None

    def test_each_verb_sends_its_request_and_the_session_has_them_bound(self) -> None:
        contexts, session = self.client.contexts, self.client.sessions.connect("s-1")
        self.assertEqual(contexts.create("s-1", cwd="/tmp"), CONTEXT)
        self.assertEqual(self.sent(), ("POST", "/v1/sessions/s-1/contexts", {"cwd": "/tmp"}))
        self.assertEqual(session.create_context(), CONTEXT)
        self.assertEqual(self.sent(), ("POST", "/v1/sessions/s-1/contexts", {}))
        contexts.get("s-1", "ctx_1")
        self.assertEqual(self.sent(), ("GET", "/v1/sessions/s-1/contexts/ctx_1", None))
        session.restart_context("default")
        self.assertEqual(self.sent(), ("POST", "/v1/sessions/s-1/contexts/default/restart", None))
        self.fake.reply = lambda handler, n: send_json(handler, 200, {"contexts": [CONTEXT]})
        self.assertEqual(session.list_contexts(), [CONTEXT])
        self.assertEqual(self.sent(), ("GET", "/v1/sessions/s-1/contexts", None))
        self.fake.reply = no_content
        self.assertIsNone(session.delete_context("ctx_1"))
        self.assertEqual(self.sent(), ("DELETE", "/v1/sessions/s-1/contexts/ctx_1", None))
        self.fake.reply = lambda handler, n: send_json(handler, 404, {"error": "No such session", "code": "NOT_FOUND"})
        with self.assertRaises(sandboxd.SessionError):
            contexts.list("s-1")
        with self.assertRaises(sandboxd.NotFoundError):
            contexts.get("s-1", "ctx_2")

    def test_execute_sends_context_id_only_when_given(self) -> None:
        answer = {"execution_id": 1, "status": "completed", "exit_code": 0, "stdout": "", "stderr": ""}
        self.fake.reply = lambda handler, n: send_json(handler, 200, answer)
        session = self.client.sessions.connect("s-1")
        session.execute("x = 1")
        self.assertNotIn("context_id", self.sent()[2])
        session.execute("x = 2", context_id="ctx_1")
        self.assertEqual(self.sent()[2]["context_id"], "ctx_1")
        self.client.execute("x", session_id="s-1", context_id="default")
        self.assertEqual(self.sent()[:2], ("POST", "/execute"))
        self.assertEqual(self.sent()[2]["context_id"], "default")
        self.fake.reply = lambda handler, n: send_json(handler, 200, {"task_id": 7, "session_id": "s-1"})
        session.execute_async("x", context_id="ctx_1")
        self.assertEqual(self.sent()[:2], ("POST", "/v1/execute_async"))
        self.assertEqual(self.sent()[2]["context_id"], "ctx_1")


class AsyncContextRequests(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    async def test_the_asyncio_session_makes_a_context_and_runs_in_it(self) -> None:
        self.fake.reply = lambda handler, n: send_json(handler, 201, CONTEXT)
        async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url) as client:
            session = client.sessions.connect("s-1")
            self.assertEqual(await session.create_context(cwd="/tmp"), CONTEXT)
            self.fake.reply = lambda handler, n: send_json(handler, 200, {"task_id": 7, "session_id": "s-1"})
            run = await session.execute_async("x", context_id="ctx_1")
            self.assertIsInstance(run, sandboxd.AsyncExecutionRun)
        self.assertEqual(
            [(s.method, s.path, json.loads(s.body).get("context_id")) for s in self.fake.seen],
            [("POST", "/v1/sessions/s-1/contexts", None), ("POST", "/v1/execute_async", "ctx_1")],
        )


if __name__ == "__main__":
    unittest.main()
