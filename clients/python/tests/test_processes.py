"""Background processes against a local ``http.server`` (no VMs): the requests each method sends, NDJSON answers
read event by event (keep-alives skipped, a line cut off ends the stream), ``run`` handing output to callbacks
(coroutine functions too, for asyncio) and reading the output again from where a broken stream stopped."""

from __future__ import annotations

import asyncio
import base64
import http.server
import json
import unittest
from typing import Any, Dict, List, Optional

from _support import sandboxd
from test_transport import FakeServer, send_json

PROCESS: Dict[str, Any] = {
    "process_id": "proc_1",
    "session_id": "s-1",
    "vm_id": "vm-1",
    "pid": 42,
    "tag": None,
    "command": "echo a; echo b",
    "argv": None,
    "cwd": "/root",
    "stdin": False,
    "status": "running",
    "exit_code": None,
    "signal": None,
    "timed_out": False,
    "error": None,
    "started_at": "2024-01-01T00:00:00.000Z",
    "ended_at": None,
    "output_seq": 0,
}
ENDED = {**PROCESS, "status": "exited", "exit_code": 0, "ended_at": "2024-01-01T00:00:01.000Z", "output_seq": 3}


def send_ndjson(handler: http.server.BaseHTTPRequestHandler, events: List[Any], *, complete: bool = True) -> None:
    """A chunked NDJSON answer, a line per chunk (an empty line is a keep-alive); ``complete=False`` breaks the
    connection off before the answer's end."""
    handler.send_response(200)
    handler.send_header("content-type", "application/x-ndjson; charset=utf-8")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    for event in events:
        line = ("" if event is None else json.dumps(event)).encode("utf-8") + b"\n"
        handler.wfile.write(f"{len(line):x}\r\n".encode("ascii") + line + b"\r\n")
        handler.wfile.flush()
    if complete:
        handler.wfile.write(b"0\r\n\r\n")
    else:
        handler.close_connection = True
    handler.wfile.flush()


STREAM = [
    {"type": "start", "process": PROCESS},
    {"type": "stdout", "seq": 1, "data": "a\n"},
    None,
    {"type": "stderr", "seq": 2, "data": "oops\n"},
    {"type": "stdout", "seq": 3, "data": "b\n"},
    {"type": "exit", "process": ENDED},
]


class ProcessRequests(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.fake.reply = lambda handler, n: send_json(handler, 200, PROCESS)
        self.client = sandboxd.Sandboxd(api_key="sbx_sk_test", base_url=self.fake.url, retry_delay=0.01)

    def body(self, index: int = -1) -> Any:
        return json.loads(self.fake.seen[index].body)

    def test_start_sends_what_was_given_and_refuses_both_or_neither_program(self) -> None:
        self.assertEqual(self.client.processes.start("s-1", "sleep 5", tag="t", stdin=True), PROCESS)
        seen = self.fake.seen[-1]
        self.assertEqual((seen.method, seen.path), ("POST", "/v1/sessions/s-1/processes"))
        self.assertEqual(self.body(), {"command": "sleep 5", "stdin": True, "tag": "t"})
        self.assertEqual(seen.headers["accept"], "application/json")
        self.client.processes.start("s-1", argv=["cat"], cwd="/tmp", env={"A": "1"}, timeout_seconds=9, user="user")
        self.assertEqual(
            self.body(), {"argv": ["cat"], "cwd": "/tmp", "env": {"A": "1"}, "timeout_seconds": 9, "user": "user"}
        )
        for wrong in ({}, {"command": "x", "argv": ["x"]}):
            with self.assertRaises(TypeError):
                self.client.processes.start("s-1", **wrong)
        self.assertEqual(len(self.fake.seen), 2, "nothing sent for a wrong call")

    def test_stdin_signal_kill_get_and_list(self) -> None:
        processes = self.client.processes
        processes.send_stdin("s-1", "proc_1", "héllo ")
        self.assertEqual(self.body(), {"data": "héllo "})
        processes.send_stdin("s-1", "proc_1", b"\x00\xffbytes", eof=True)
        self.assertEqual(self.body(), {"data_base64": base64.b64encode(b"\x00\xffbytes").decode(), "eof": True})
        processes.close_stdin("s-1", "proc_1")
        self.assertEqual(self.body(), {"eof": True})
        self.assertEqual({s.path for s in self.fake.seen}, {"/v1/sessions/s-1/processes/proc_1/stdin"})
        with self.assertRaises(TypeError):
            processes.send_stdin("s-1", "proc_1", 42)  # type: ignore[arg-type]
        processes.signal("s-1", "proc_1", "SIGTERM")
        self.assertEqual(
            (self.fake.seen[-1].path, self.body()), ("/v1/sessions/s-1/processes/proc_1/signal", {"signal": "SIGTERM"})
        )
        processes.kill("s-1", "proc_1")
        processes.get("s-1", "proc/2")
        self.assertEqual(
            [(s.method, s.path) for s in self.fake.seen[-2:]],
            [("DELETE", "/v1/sessions/s-1/processes/proc_1"), ("GET", "/v1/sessions/s-1/processes/proc%2F2")],
        )
        self.fake.reply = lambda handler, n: send_json(handler, 200, {"processes": [PROCESS]})
        self.assertEqual(processes.list("s-1"), [PROCESS])
        session = self.client.sessions.connect("s-1")
        self.assertEqual(session.processes(), [PROCESS])
        self.fake.reply = lambda handler, n: send_json(handler, 404, {"error": "No such session", "code": "NOT_FOUND"})
        with self.assertRaises(sandboxd.SessionError):
            processes.list("s-1")
        with self.assertRaises(sandboxd.NotFoundError):
            processes.get("s-1", "proc_1")

    def test_output_is_read_event_by_event(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, STREAM[1:])
        with self.client.processes.output("s-1", "proc_1", after=0, follow=False) as stream:
            self.assertIsInstance(stream, sandboxd.ProcessEventStream)
            events = list(stream)
        seen = self.fake.seen[-1]
        self.assertEqual(seen.path, "/v1/sessions/s-1/processes/proc_1/output?after=0&follow=false")
        self.assertEqual(seen.headers["accept"], "application/x-ndjson")
        self.assertEqual([e["type"] for e in events], ["stdout", "stderr", "stdout", "exit"], "keep-alive skipped")
        self.assertEqual((stream.last_seq, stream.process), (3, ENDED))

    def test_a_line_cut_off_ends_the_stream(self) -> None:
        def reply(handler: http.server.BaseHTTPRequestHandler, n: int) -> None:
            handler.send_response(200)
            handler.send_header("content-type", "application/x-ndjson")
            handler.end_headers()
            handler.wfile.write(b'{"type":"stdout","seq":1,"data":"a"}\n{"type":"std')
            handler.close_connection = True

        self.fake.reply = reply
        stream = self.client.processes.output("s-1", "proc_1")
        self.assertEqual([e.get("seq") for e in stream], [1])

    def test_run_hands_output_to_callbacks_and_returns_the_ended_process(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, STREAM)
        out: List[str] = []
        err: List[str] = []
        ended = self.client.processes.run("s-1", "echo a; echo b", on_stdout=out.append, on_stderr=err.append)
        self.assertEqual((ended, "".join(out), err), (ENDED, "a\nb\n", ["oops\n"]))
        seen = self.fake.seen[-1]
        self.assertEqual(seen.headers["accept"], "application/x-ndjson")
        self.assertEqual(self.body(), {"command": "echo a; echo b"})
        # The session's verb: the same request.
        self.assertEqual(self.client.sessions.connect("s-1").run_process("true"), ENDED)

    def test_run_reads_the_output_again_after_a_broken_stream(self) -> None:
        def reply(handler: http.server.BaseHTTPRequestHandler, n: int) -> None:
            if n == 1:
                send_ndjson(handler, STREAM[:2], complete=False)
            elif n == 2:
                send_ndjson(handler, [], complete=False)  # nothing new: read again from the same place
            else:
                send_ndjson(handler, STREAM[3:])

        self.fake.reply = reply
        out: List[str] = []
        self.assertEqual(self.client.processes.run("s-1", "x", on_stdout=out.append), ENDED)
        self.assertEqual("".join(out), "a\nb\n", "nothing twice, nothing lost")
        self.assertEqual(
            [s.path for s in self.fake.seen[1:]],
            ["/v1/sessions/s-1/processes/proc_1/output?after=1&follow=true"] * 2,
        )

    def test_run_gives_up_when_the_stream_ends_before_the_start(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, [], complete=False)
        with self.assertRaises(sandboxd.NetworkError):
            self.client.processes.run("s-1", "x")
        self.assertEqual(len(self.fake.seen), 1, "a start is never sent twice")


class AsyncProcessRequests(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    async def test_run_awaits_coroutine_callbacks_and_output_iterates(self) -> None:
        self.fake.reply = lambda handler, n: send_ndjson(handler, STREAM)
        out: List[str] = []
        plain: List[str] = []

        async def on_stdout(text: str) -> None:
            await asyncio.sleep(0)
            out.append(text)

        async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url) as client:
            session = client.sessions.connect("s-1")
            ended = await session.run_process("x", on_stdout=on_stdout, on_stderr=plain.append)
            self.assertEqual((ended, "".join(out), plain), (ENDED, "a\nb\n", ["oops\n"]))
            stream = await client.processes.output("s-1", "proc_1")
            self.assertIsInstance(stream, sandboxd.AsyncProcessEventStream)
            types: List[Optional[str]] = []
            async with stream:
                async for event in stream:
                    types.append(event["type"])
            self.assertEqual(types, ["start", "stdout", "stderr", "stdout", "exit"])
            self.assertEqual(stream.last_seq, 3)


if __name__ == "__main__":
    unittest.main()
