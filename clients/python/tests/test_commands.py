"""Streamed execute (``execute(..., on_stdout=...)``) and E2B-style ``session.commands`` against a fake server: the
NDJSON a run streams, the errors its ``timeout`` and ``error`` events raise, callbacks in order (coroutine
functions in asyncio), and commands over the processes resource. No VM: the live walk-through runs them for real."""

from __future__ import annotations

import asyncio
import http.server
import json
import unittest
from typing import Any, Dict, List, Tuple

from _support import sandboxd
from test_processes import ENDED, PROCESS, send_ndjson
from test_transport import FakeServer, send_json

EXECUTION: Dict[str, Any] = {
    "execution_id": 7,
    "session_id": "s-1",
    "status": "completed",
    "stdout": "1\n2\n",
    "stderr": "w\n",
    "exit_code": 0,
    "execution_time": 0.5,
}
RUN = [
    {"type": "start", "execution_id": 7, "session_id": "s-1"},
    {"type": "stdout", "data": "1\n"},
    None,
    {"type": "stderr", "data": "w\n"},
    {"type": "stdout", "data": "2\n"},
    {"type": "end", "execution": EXECUTION},
]
TIMED_OUT = {"type": "timeout", "execution_id": 7, "session_id": "s-1", "detail": "still running after 1 s"}
FAILED = {"type": "error", "status": 404, "code": "NOT_FOUND", "detail": "No such session"}


class StreamedExecute(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.client = sandboxd.Sandboxd(api_key="sbx_sk_test", base_url=self.fake.url, retry_delay=0.01)
        self.session = self.client.sessions.connect("s-1")

    def test_output_reaches_the_callbacks_in_order_and_the_end_is_the_answer(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, RUN)
        seen: List[Tuple[str, str]] = []
        result = self.session.execute(
            "print(1)", on_stdout=lambda t: seen.append(("out", t)), on_stderr=lambda t: seen.append(("err", t))
        )
        self.assertEqual(seen, [("out", "1\n"), ("err", "w\n"), ("out", "2\n")])
        self.assertIsInstance(result, sandboxd.models.ExecuteResponse)
        self.assertEqual((result.stdout, result.execution_id), ("1\n2\n", 7))
        request = self.fake.seen[-1]
        self.assertEqual((request.method, request.path), ("POST", "/execute"))
        self.assertEqual(request.headers["accept"], "application/x-ndjson")
        self.assertEqual(json.loads(request.body)["session_id"], "s-1")
        # Without a callback: the plain call, a JSON answer.
        self.fake.reply = lambda handler, n: send_json(handler, 200, EXECUTION)
        self.assertEqual(self.session.execute("print(1)").stdout, "1\n2\n")
        self.assertEqual(self.fake.seen[-1].headers["accept"], "application/json")

    def test_a_timeout_event_raises_what_a_408_raises(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, RUN[:2] + [TIMED_OUT])
        out: List[str] = []
        with self.assertRaises(sandboxd.ExecutionError) as caught:
            self.client.execute("x", session_id="s-1", timeout=1, on_stdout=out.append)
        error = caught.exception
        self.assertEqual((error.status, error.code, error.execution_id), (408, "EXECUTION_TIMEOUT", 7))
        self.assertEqual((error.session_id, str(error), out), ("s-1", "still running after 1 s", ["1\n"]))
        self.assertEqual(len(self.fake.seen), 1, "never sent again")

    def test_an_error_event_raises_the_class_of_its_status_and_code(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, [RUN[0], FAILED])
        with self.assertRaises(sandboxd.SessionError) as caught:
            self.session.execute("x", on_stderr=lambda t: None)
        self.assertEqual((caught.exception.status, caught.exception.code), (404, "NOT_FOUND"))
        self.fake.reply = lambda handler, n: send_ndjson(
            handler, [{"type": "error", "status": 503, "code": "VM_UNAVAILABLE", "detail": "gone"}]
        )
        with self.assertRaises(sandboxd.NetworkError):
            self.session.execute("x", on_stdout=lambda t: None)
        self.assertEqual(len(self.fake.seen), 2, "an error is never retried")

    def test_a_refusal_before_the_stream_and_a_stream_cut_short(self) -> None:
        self.fake.reply = lambda handler, n: send_json(handler, 422, {"detail": [{"loc": ["body"], "msg": "bad"}]})
        with self.assertRaises(sandboxd.ValidationError):
            self.session.execute("x", on_stdout=lambda t: None)
        self.fake.reply = lambda handler, n: send_ndjson(handler, RUN[:2], complete=False)
        with self.assertRaises(sandboxd.NetworkError):
            self.session.execute("x", on_stdout=lambda t: None)
        self.assertEqual(len(self.fake.seen), 2)


def process_server(state: Dict[str, Any]) -> Any:
    """Replies as the processes API would for one command ``proc_1``: start, get, kill, stdin and its output."""

    def reply(handler: http.server.BaseHTTPRequestHandler, n: int) -> None:
        path, method = handler.path.split("?")[0], handler.command
        if method == "POST" and path == "/v1/sessions/s-1/processes":
            send_json(handler, 201, PROCESS)
        elif path == "/v1/sessions/s-1/processes/proc_1/output":
            send_ndjson(handler, state["output"])
        elif method == "GET" and path == "/v1/sessions/s-1/processes/proc_1":
            send_json(handler, 200, state["process"])
        elif method == "DELETE":
            send_json(handler, 200, {**ENDED, "exit_code": None, "signal": "SIGKILL"})
        elif method == "GET" and path == "/v1/sessions/s-1/processes":
            send_json(handler, 200, {"processes": [PROCESS, ENDED]})
        elif path.endswith("/stdin"):
            send_json(handler, 200, PROCESS)
        else:
            send_json(handler, 404, {"detail": "no", "code": "NOT_FOUND"})

    return reply


OUTPUT = [
    {"type": "stdout", "seq": 1, "data": "a\n"},
    {"type": "stderr", "seq": 2, "data": "oops\n"},
    {"type": "exit", "process": {**ENDED, "exit_code": 3}},
]


class Commands(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.state: Dict[str, Any] = {"output": OUTPUT[:2] + [{"type": "exit", "process": ENDED}], "process": PROCESS}
        self.fake.reply = process_server(self.state)
        client = sandboxd.Sandboxd(api_key="sbx_sk_test", base_url=self.fake.url, retry_delay=0.01)
        self.commands = client.sessions.connect("s-1").commands

    def test_run_starts_a_process_with_e2b_names_and_waits_for_its_result(self) -> None:
        out: List[str] = []
        result = self.commands.run(
            "echo a", envs={"A": "1"}, cwd="/tmp", user="user", timeout=1.5, on_stdout=out.append
        )
        self.assertEqual(
            json.loads(self.fake.seen[0].body),
            {
                "command": "echo a",
                "cwd": "/tmp",
                "user": "user",
                "env": {"A": "1"},
                "timeout_seconds": 2,
            },
        )
        self.assertEqual(self.fake.seen[1].path, "/v1/sessions/s-1/processes/proc_1/output?after=0&follow=true")
        self.assertEqual(out, ["a\n"])
        self.assertEqual(result, sandboxd.CommandResult(0, "a\n", "oops\n", None, 42, "proc_1"))
        with self.assertRaises(ValueError):
            self.commands.run("x", timeout=-1)

    def test_a_non_zero_exit_raises_command_exit_error_with_the_result(self) -> None:
        self.state["output"] = OUTPUT
        with self.assertRaises(sandboxd.CommandExitError) as caught:
            self.commands.run("false")
        error = caught.exception
        self.assertIsInstance(error, sandboxd.ExecutionError)
        self.assertEqual(
            (error.exit_code, error.stdout, error.stderr, error.process_id), (3, "a\n", "oops\n", "proc_1")
        )
        self.assertEqual(error.result.exit_code, 3)
        self.assertIn("oops", str(error))

    def test_a_killed_command_ends_with_minus_one_and_its_signal(self) -> None:
        killed = {**ENDED, "exit_code": None, "signal": "SIGKILL"}
        self.state["output"] = [{"type": "exit", "process": killed}]
        with self.assertRaises(sandboxd.CommandExitError) as caught:
            self.commands.run("sleep 9")
        self.assertEqual((caught.exception.exit_code, caught.exception.signal), (-1, "SIGKILL"))
        self.assertEqual(caught.exception.error, "killed by SIGKILL")

    def test_background_handle_stdin_kill_list_and_connect(self) -> None:
        handle = self.commands.run("cat", background=True, stdin=True)
        self.assertIsInstance(handle, sandboxd.CommandHandle)
        self.assertEqual((handle.pid, handle.process_id, handle.exit_code), (42, "proc_1", None))
        self.assertEqual(json.loads(self.fake.seen[0].body), {"command": "cat", "stdin": True})
        handle.send_stdin("hi\n")
        handle.close_stdin()
        self.assertEqual([json.loads(s.body) for s in self.fake.seen[1:]], [{"data": "hi\n"}, {"eof": True}])
        self.assertTrue(handle.kill(), "running, then killed by SIGKILL")
        self.assertEqual(handle.wait().stdout, "a\n")
        self.assertEqual(handle.exit_code, 0)
        self.assertEqual([p.process_id for p in self.commands.list()], ["proc_1"], "running ones only")
        self.state["process"] = ENDED
        self.assertFalse(self.commands.kill("proc_1"), "already ended")
        self.assertFalse(self.commands.kill("proc_9"), "no such command")
        connected = self.commands.connect("proc_1")
        connected.disconnect()
        with self.assertRaises(sandboxd.SandboxdError):
            connected.wait()


class AsyncStreamedExecuteAndCommands(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    async def test_coroutine_callbacks_are_awaited_in_order(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, RUN)
        seen: List[str] = []

        async def on_stdout(text: str) -> None:
            await asyncio.sleep(0.01)  # a slow callback: the next piece waits for it
            seen.append("out " + text)

        async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url) as client:
            session = client.sessions.connect("s-1")
            result = await session.execute("x", on_stdout=on_stdout, on_stderr=lambda t: seen.append("err " + t))
            self.assertEqual(seen, ["out 1\n", "err w\n", "out 2\n"])
            self.assertEqual(result.execution_id, 7)
            self.fake.reply = lambda handler, n: send_ndjson(handler, [TIMED_OUT])
            with self.assertRaises(sandboxd.ExecutionError) as caught:
                await client.execute("x", session_id="s-1", on_stdout=on_stdout)
            self.assertEqual(caught.exception.execution_id, 7)

            state = {"output": OUTPUT, "process": PROCESS}
            self.fake.reply = process_server(state)
            out: List[str] = []

            async def collect(text: str) -> None:
                out.append(text)

            handle = await session.commands.run("x", background=True, on_stdout=collect)
            self.assertIsInstance(handle, sandboxd.AsyncCommandHandle)
            with self.assertRaises(sandboxd.CommandExitError) as failed:
                await handle.wait()
            self.assertEqual((failed.exception.exit_code, out, handle.stderr), (3, ["a\n"], "oops\n"))


if __name__ == "__main__":
    unittest.main()
