"""The README walk-through with the sync client, on a real server with real VMs: Python state between calls,
rich results (a matplotlib figure as PNG, a DataFrame as HTML) and Python contexts, bash exit codes, files in and
out byte for byte, files made, described, moved and removed, a directory watched (its changes in order),
background processes (output streamed, stdin, a signal, kill), an async run polled to completion, a terminal
driven over its WebSocket, status and lists, a share, API keys, the error classes of 404/409/422/429/401/403, and
kill.

Every answer is also checked against the TypedDicts of ``sandboxd.models`` (``assertShape``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import threading
import typing
import time
import unittest
import urllib.request
import uuid

from _support import (
    FIRST_CALL_TIMEOUT,
    OTHER_API_KEY,
    TINY_API_KEY,
    URL,
    ShapeAssertions,
    client,
    live,
    models,
    sandboxd,
)


@live
class WalkThrough(ShapeAssertions):
    @classmethod
    def setUpClass(cls) -> None:
        cls.client = client()
        cls.suite = f"python-walkthrough-{uuid.uuid4().hex[:8]}"  # unique: the server may have older runs' sandboxes
        cls.session = cls.client.sessions.create(vcpu_count=2, metadata={"suite": cls.suite})
        first = cls.session.execute("x = 21\nprint('set')", timeout=FIRST_CALL_TIMEOUT)
        assert first["exit_code"] == 0, first
        cls.vm_id = first["vm_id"]

    @classmethod
    def tearDownClass(cls) -> None:
        try:
            cls.session.kill()
        except sandboxd.SandboxdError:
            pass

    def test_the_created_session_matches_the_model(self) -> None:
        self.assertShape(self.session.created, models.SessionCreateResponse)
        self.assertEqual(self.session.created["metadata"], {"suite": self.suite})

    def test_python_keeps_its_state_between_executions(self) -> None:
        result = self.session.execute("print(x * 2)")
        self.assertShape(result, models.ExecuteResponse)
        self.assertEqual(result["stdout"], "42\n")
        self.assertEqual(result["status"], "completed")
        self.assertEqual(result["session_id"], self.session.id)
        self.assertEqual(result["vm_id"], self.vm_id, "the same VM")

    def test_rich_results_and_python_contexts(self) -> None:
        plot = self.session.execute(
            'import matplotlib.pyplot as plt; import pandas as pd; plt.plot([1, 2]); pd.DataFrame({"a": [1]})',
            timeout=120,
        )
        self.assertShape(plot, models.ExecuteResponse)
        self.assertEqual((plot["status"], plot["exception"], plot["context_id"]), ("completed", None, "default"), plot)
        figure, frame = plot["results"]  # the figure left open, then the last expression's value
        self.assertEqual((figure["is_main_result"], frame["is_main_result"]), (False, True))
        self.assertTrue(base64.b64decode(figure["png"]).startswith(b"\x89PNG"), figure.get("text"))
        self.assertIn("<table", frame["html"])

        ctx = self.session.create_context()
        self.assertShape(ctx, models.ContextInfo)
        self.assertTrue(ctx["id"].startswith("ctx_"), ctx)
        self.session.execute("x = 1")
        self.session.execute("x = 2", context_id=ctx["id"])
        self.assertEqual(self.session.execute("print(x)")["stdout"], "1\n")
        in_context = self.session.execute("print(x)", context_id=ctx["id"])
        self.assertEqual((in_context["stdout"], in_context["context_id"]), ("2\n", ctx["id"]))
        self.assertEqual([c["id"] for c in self.session.list_contexts()], ["default", ctx["id"]])
        self.assertShape(self.session.restart_context(ctx["id"]), models.ContextInfo)
        cleared = self.session.execute("x", context_id=ctx["id"])
        self.assertEqual((cleared["exception"] or {}).get("name"), "NameError", cleared)
        self.assertEqual(self.session.execute("print(x)")["stdout"], "1\n", "the default context goes on")
        self.session.delete_context(ctx["id"])
        with self.assertRaises(sandboxd.NotFoundError):
            self.client.contexts.get(self.session.id, ctx["id"])
        self.session.execute("x = 21")  # as setUpClass left it, for the tests that read it

    def test_bash_passes_its_exit_code_through(self) -> None:
        result = self.session.execute("echo out; echo err >&2; exit 3", language="bash")
        self.assertEqual((result["exit_code"], result["stdout"], result["stderr"]), (3, "out\n", "err\n"))
        with self.assertRaises(sandboxd.ExecutionError) as caught:
            self.session.execute("exit 5", language="bash", raise_on_error=True)
        self.assertEqual(caught.exception.exit_code, 5)
        self.assertIsInstance(caught.exception.execution_id, int)

    def test_upload_and_download_are_byte_exact(self) -> None:
        data = bytes(range(256)) + os.urandom(300_000)
        uploaded = self.session.upload(data, "/tmp/blob.bin")
        self.assertShape(uploaded, models.PostUploadResponse)
        self.assertEqual(uploaded["size"], len(data))
        digest = self.session.execute("sha256sum /tmp/blob.bin | cut -d' ' -f1", language="bash")
        self.assertEqual(digest["stdout"].strip(), hashlib.sha256(data).hexdigest())
        self.assertEqual(self.session.download("/tmp/blob.bin"), data)
        self.session.upload("hello from python\n", "notes/hello.txt")
        self.assertEqual(self.session.download("/root/notes/hello.txt"), b"hello from python\n")

    def test_files_stream_from_and_to_disk(self) -> None:
        import tempfile
        from pathlib import Path

        with tempfile.TemporaryDirectory() as folder:
            source = Path(folder) / "source.bin"
            source.write_bytes(os.urandom(200_000))
            self.session.upload_file(source, "/tmp/")
            target = Path(folder) / "copy.bin"
            size = self.session.download_file("/tmp/source.bin", target)
            self.assertEqual(size, 200_000)
            self.assertEqual(target.read_bytes(), source.read_bytes())
            with open(source, "rb") as handle:
                self.session.upload(handle, "/tmp/from-handle.bin")
            self.assertEqual(self.session.download("/tmp/from-handle.bin"), source.read_bytes())

    def test_files_are_made_described_moved_and_removed(self) -> None:
        self.assertIs(self.session.mkdir("tree/a/b"), True, "made, with its parents")
        self.assertIs(self.session.mkdir("/root/tree/a/b"), False, "already there")
        directory = self.session.stat("tree/a")
        self.assertShape(directory, models.FileEntry)
        self.assertEqual((directory["name"], directory["path"], directory["type"]), ("a", "/root/tree/a", "directory"))
        self.session.upload("moved\n", "/root/tree/a/b/old.txt")
        moved = self.session.rename("tree/a/b/old.txt", "tree/new.txt")
        self.assertShape(moved, models.FileEntry)
        self.assertEqual((moved["path"], moved["type"], moved["size"]), ("/root/tree/new.txt", "file", 6))
        self.assertIs(self.session.exists("tree/a/b/old.txt"), False)
        self.assertIs(self.session.exists("/root/tree/new.txt"), True)
        listing = self.client.files.list(self.session.id, "tree")
        self.assertEqual(
            [(e["type"], e["name"]) for e in listing["entries"]], [("directory", "a"), ("file", "new.txt")]
        )
        written = self.session.write_files(
            [
                {"path": "tree/a/b/one.txt", "data": "one\n"},
                {"path": "/root/tree/c/two.bin", "data": b"\x00\xff", "mode": 0o600},
            ]
        )
        self.assertEqual(
            written, [{"path": "/root/tree/a/b/one.txt", "size": 4}, {"path": "/root/tree/c/two.bin", "size": 2}]
        )
        self.assertEqual(self.session.download("tree/c/two.bin"), b"\x00\xff")
        deep = self.client.files.list(self.session.id, "tree", depth=2)
        self.assertEqual(
            [e["path"].replace("/root/tree/", "") for e in deep["entries"]], ["a", "a/b", "c", "c/two.bin", "new.txt"]
        )
        self.assertIs(deep["truncated"], False)
        with self.assertRaises(sandboxd.SandboxdError) as not_empty:
            self.session.remove("tree")
        self.assertEqual((not_empty.exception.status, not_empty.exception.code), (409, "CONFLICT"))
        self.assertIs(self.session.remove("tree", recursive=True), True)
        self.assertIs(self.session.exists("tree"), False)
        self.assertIs(self.session.remove("tree"), False, "nothing left to remove")
        with self.assertRaises(sandboxd.NotFoundError):
            self.session.stat("/root/tree")

    def test_a_directory_is_watched_and_its_changes_come_in_order(self) -> None:
        watched, note = "/root/watched-py", "/root/watched-py/a.txt"
        self.assertIs(self.session.mkdir("watched-py"), True)
        events: typing.List[typing.Any] = []
        with self.session.watch("watched-py", recursive=True) as stream:
            self.assertIsInstance(stream, sandboxd.FileWatchStream)
            # Closed from another thread should the removal never come: the test fails instead of hanging.
            guard = threading.Timer(120, stream.close)
            guard.start()
            try:
                start = next(stream)
                self.assertShape(start, models.FileWatchEvent)
                self.assertEqual((start["type"], start["path"], start["recursive"]), ("start", watched, True))
                done = self.session.execute(f"echo hi > {note} && rm {note}", language="bash")
                self.assertEqual(done["exit_code"], 0, done)
                for event in stream:
                    self.assertShape(event, models.FileWatchEvent)
                    events.append(event)
                    if (event["type"], event.get("path")) == ("remove", note):
                        break
            finally:
                guard.cancel()
        changes = [e["type"] for e in events if e.get("path") == note]
        self.assertIn("create", changes, events)
        self.assertEqual(changes[-1], "remove", events)
        self.assertLess(changes.index("create"), changes.index("remove"), events)
        self.assertIs(next(stream, None), None, "closed by leaving the block")
        # Errors come from the call, before any event.
        with self.assertRaises(sandboxd.NotFoundError):
            self.session.watch("watched-py-missing")
        self.session.upload("not a directory\n", "watched-py/file.txt")
        with self.assertRaises(sandboxd.SandboxdError) as not_a_directory:
            self.session.watch("watched-py/file.txt")
        self.assertEqual(not_a_directory.exception.status, 409)
        self.assertIs(self.session.remove("watched-py", recursive=True), True)

    def test_a_background_process_runs_with_its_output_streamed_to_a_callback(self) -> None:
        chunks: typing.List[str] = []
        ended = self.session.run_process("echo a; sleep 0.3; echo b", on_stdout=chunks.append)
        self.assertShape(ended, models.ProcessInfo)
        self.assertEqual("".join(chunks), "a\nb\n")
        self.assertGreaterEqual(len(chunks), 2, "each piece as it came")
        self.assertEqual((ended["status"], ended["exit_code"], ended["signal"]), ("exited", 0, None))
        self.assertEqual(ended["session_id"], self.session.id)

    def test_a_streamed_execute_and_e2b_style_commands(self) -> None:
        arrivals: typing.List[typing.Tuple[float, str]] = []
        code = "import time\nfor i in range(3):\n    print(f'line {i}')\n    time.sleep(0.5)"
        result = self.session.execute(code, on_stdout=lambda text: arrivals.append((time.monotonic(), text)))
        self.assertShape(result, models.ExecuteResponse)
        self.assertEqual(result.stdout, "line 0\nline 1\nline 2\n")
        self.assertEqual("".join(text for _, text in arrivals), result.stdout)
        # A print may reach the stream as two writes (the text, then the newline), so what is checked is when each
        # whole line had arrived, not how many chunks carried it.
        line_ends: typing.List[float] = []
        received = ""
        for at, text in arrivals:
            received += text
            line_ends.extend(at for _ in range(received.count("\n") - len(line_ends)))
        self.assertEqual(len(line_ends), 3, arrivals)
        self.assertGreaterEqual(line_ends[1] - line_ends[0], 0.3, "the lines came one by one, not at the end")
        self.assertGreaterEqual(line_ends[2] - line_ends[1], 0.3, "the lines came one by one, not at the end")

        commands = self.session.commands
        who = commands.run("whoami; pwd", user="user")
        self.assertEqual((who.exit_code, who.stdout, who.error), (0, "user\n/home/user\n", None))
        with self.assertRaises(sandboxd.CommandExitError) as failed:
            commands.run("echo nope >&2; exit 4", envs={"A": "1"})
        self.assertEqual((failed.exception.exit_code, failed.exception.stderr), (4, "nope\n"))
        self.assertIsInstance(failed.exception, sandboxd.ExecutionError)

        cat = commands.run("cat", background=True, stdin=True)
        self.assertIn(cat.process_id, [p.process_id for p in commands.list()])
        cat.send_stdin("from stdin\n")
        commands.send_stdin(cat.process_id, b"bytes too\n")
        cat.close_stdin()
        ended = cat.wait()
        self.assertEqual((ended.exit_code, ended.stdout, ended.pid), (0, "from stdin\nbytes too\n", cat.pid))
        self.assertIs(commands.kill(cat.process_id), False, "it had ended")

    def test_a_background_process_takes_stdin_and_its_output_is_read_back(self) -> None:
        cat = self.session.start_process(argv=["cat"], stdin=True, tag="cat")
        self.assertShape(cat, models.ProcessInfo)
        self.assertEqual((cat["status"], cat["stdin"], cat["tag"], cat["argv"]), ("running", True, "cat", ["cat"]))
        self.assertShape(self.session.send_stdin(cat["process_id"], "hello "), models.ProcessInfo)
        self.session.send_stdin(cat["process_id"], b"world\n")
        self.session.close_stdin(cat["process_id"])
        with self.session.process_output(cat["process_id"], follow=True) as stream:
            self.assertIsInstance(stream, sandboxd.ProcessEventStream)
            events = list(stream)
        for event in events:
            self.assertShape(event, models.ProcessEvent)
        self.assertEqual("".join(e["data"] for e in events if e["type"] == "stdout"), "hello world\n")
        self.assertEqual(events[-1]["type"], "exit")
        self.assertEqual((events[-1]["process"]["status"], events[-1]["process"]["exit_code"]), ("exited", 0))
        self.assertEqual(stream.last_seq, events[-1]["process"]["output_seq"])
        with self.assertRaises(sandboxd.SandboxdError) as ended:
            self.session.send_stdin(cat["process_id"], "more")
        self.assertEqual(ended.exception.status, 409)

    def test_a_background_process_gets_a_signal_and_one_is_killed(self) -> None:
        processes = self.client.processes
        script = "trap 'echo got-term; exit 7' TERM; echo ready; while true; do sleep 0.1; done"
        trapped = processes.start(self.session.id, script)
        text, signalled = "", False
        with processes.output(self.session.id, trapped["process_id"]) as stream:
            for event in stream:
                text += event.get("data", "") if event["type"] == "stdout" else ""
                if "ready" in text and not signalled:
                    self.assertShape(
                        processes.signal(self.session.id, trapped["process_id"], "SIGTERM"), models.ProcessInfo
                    )
                    signalled = True
        self.assertEqual(text, "ready\ngot-term\n")
        self.assertEqual((stream.process or {}).get("exit_code"), 7)
        self.assertEqual(processes.get(self.session.id, trapped["process_id"])["exit_code"], 7)

        sleeper = self.session.start_process("sleep 1000", tag="sleeper")
        listed = self.session.processes()
        self.assertShape(listed, typing.List[models.ProcessInfo])
        self.assertIn((sleeper["process_id"], "running"), [(p["process_id"], p["status"]) for p in listed])
        killed = self.session.kill_process(sleeper["process_id"])
        self.assertShape(killed, models.ProcessInfo)
        self.assertEqual((killed["status"], killed["signal"], killed["exit_code"]), ("exited", "SIGKILL", None))
        self.assertEqual(self.session.get_process(sleeper["process_id"])["status"], "exited")
        listed = processes.list(self.session.id)
        self.assertIn((sleeper["process_id"], "exited"), [(p["process_id"], p["status"]) for p in listed])
        with self.assertRaises(sandboxd.NotFoundError):
            self.session.get_process("proc_0000000000000000")
        self.assertEqual(self.session.execute("print('still here')")["stdout"], "still here\n", "the VM goes on")

    def test_an_async_run_is_polled_to_completion(self) -> None:
        run = self.session.execute_async("import time\ntime.sleep(1.5)\nprint('done')")
        self.assertIsInstance(run, sandboxd.ExecutionRun)
        self.assertEqual(run.session_id, self.session.id)
        started = time.monotonic()
        record = run.wait()
        self.assertGreaterEqual(time.monotonic() - started, 1.0)
        self.assertShape(record, models.TaskRecord)
        self.assertTrue(record["is_complete"])
        self.assertEqual(record["status"], "completed")
        self.assertEqual(record["serialized_stdout"], "done\n")
        self.assertEqual(self.client.executions.get(run.id)["id"], run.id)
        mine = self.session.executions()
        self.assertShape(mine, models.GetV1ExecutionsResponse)
        self.assertIn(run.id, [e["id"] for e in mine])

    def test_status_vms_and_sandboxes_show_the_running_vm(self) -> None:
        status = self.session.status()
        self.assertShape(status, models.SessionStatus)
        self.assertTrue(status["vm_alive"])
        self.assertEqual(status["vm_status"], "active")
        self.assertGreater(status["expires_in_seconds"] or 0, 0)
        vms = self.client.vms.list(status="active")
        self.assertShape(vms, models.GetV1VmsResponse)
        self.assertIn(status["vm_id"], [vm["vm_id"] for vm in vms])
        matching = self.client.sandboxes.list(metadata={"suite": self.suite})
        self.assertShape(matching, models.GetV1SessionsSandboxesResponse)
        self.assertEqual([s["sandbox_id"] for s in matching], [status["vm_id"]])
        self.assertEqual(self.client.sandboxes.list(metadata={"suite": "other"}), [])
        self.assertShape(self.session.usage(), models.SessionUsage)
        self.assertShape(self.session.app_url(8000), models.AppUrlResponse)

    def test_a_terminal_over_its_websocket(self) -> None:
        created = self.session.create_terminal(cols=90, rows=20, command="stty size; read x; echo got-$x; exit 4")
        self.assertShape(created, models.PtySession)
        self.assertTrue(created["pty_id"].startswith("pty-"))
        with self.session.attach_terminal(created["pty_id"]) as terminal:
            self.assertIn(b"20 90", terminal.read_until("20 90", timeout=30))
            terminal.write("abc\r")
            terminal.read_until("got-abc", timeout=30)
            self.assertEqual(terminal.wait(timeout=30), sandboxd.TerminalExit(exit_code=4, signal=None))
        listed = self.client.terminals.list(session_id=self.session.id)
        self.assertShape(listed, typing.List[models.PtySessionState])
        self.assertEqual([t["exit_code"] for t in listed if t["pty_id"] == created["pty_id"]], [4])
        self.client.terminals.delete(created["pty_id"], session_id=self.session.id)
        with self.assertRaises(sandboxd.NotFoundError):
            self.client.terminals.get(created["pty_id"], session_id=self.session.id)

    def test_an_interactive_shell_with_resize_and_a_callback(self) -> None:
        created = self.session.create_terminal(cols=80, rows=24)
        seen = []
        arrived = threading.Event()

        def on_data(chunk: bytes) -> None:
            seen.append(chunk)
            if b"size-40-120" in b"".join(seen):
                arrived.set()

        terminal = self.session.attach_terminal(created["pty_id"], on_data=on_data)
        try:
            terminal.resize(120, 40)
            time.sleep(0.3)
            terminal.write("echo size-$(stty size | tr ' ' '-')\r")
            self.assertTrue(arrived.wait(30), b"".join(seen)[-500:])
        finally:
            terminal.close()
        self.assertIsNone(terminal.exit, "detaching leaves the shell running")
        self.assertEqual(self.client.terminals.get(created["pty_id"], session_id=self.session.id)["status"], "running")
        final = self.client.terminals.delete(created["pty_id"], session_id=self.session.id)
        self.assertShape(final, models.PtySessionState)

    def test_a_public_share_serves_a_port_until_deleted(self) -> None:
        self.session.execute(
            "cd /tmp && mkdir -p site && echo shared-page > site/index.html && "
            "(nohup python3 -m http.server 8700 -d site >/dev/null 2>&1 &)",
            language="bash",
        )
        share = self.client.shares.create(session_id=self.session.id, port=8700, is_public=True)
        self.assertShape(share, models.Share)
        body = b""
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(share["url"], timeout=10) as page:
                    body = page.read()
                    break
            except OSError:
                time.sleep(0.2)
        self.assertEqual(body, b"shared-page\n")
        self.assertIn(share["share_id"], [s["share_id"] for s in self.client.shares.list(session_id=self.session.id)])
        self.client.shares.delete(share["share_id"])
        with self.assertRaises(sandboxd.NotFoundError):
            self.client.shares.get(share["share_id"])

    def test_api_keys_are_created_listed_and_deleted(self) -> None:
        self.assertTrue(self.client.api_keys.check())
        key = self.client.api_keys.create(description="python test")
        self.assertShape(key, models.ApiKeyRecord)
        self.assertTrue(key["full_key"].startswith(key["key_prefix"]))
        other = sandboxd.Sandboxd(api_key=key["full_key"], base_url=URL)
        self.assertEqual(other.api_keys.get(key["id"])["description"], "python test")
        updated = self.client.api_keys.update(key["id"], description=None)
        self.assertIsNone(updated["description"])
        self.assertShape(self.client.api_keys.list(), models.GetV1ApiKeysResponse)
        self.assertShape(self.client.api_keys.delete(key["id"]), models.DeleteV1ApiKeysItemIdResponse)
        with self.assertRaises(sandboxd.AuthenticationError) as caught:
            other.api_keys.check()
        self.assertEqual(caught.exception.status, 401)

    def test_404_and_422_map_to_their_classes(self) -> None:
        with self.assertRaises(sandboxd.NotFoundError) as missing_file:
            self.session.download("/tmp/does-not-exist")
        self.assertEqual((missing_file.exception.status, missing_file.exception.code), (404, "NOT_FOUND"))
        self.assertTrue(missing_file.exception.request_id)
        unknown = self.client.sessions.connect(str(uuid.uuid4()))
        for call in (unknown.status, unknown.kill, lambda: unknown.execute("print(1)")):
            with self.assertRaises(sandboxd.SessionError):
                call()
        with self.assertRaises(sandboxd.NotFoundError):
            self.client.executions.get(2_000_000_000)
        with self.assertRaises(sandboxd.ValidationError) as invalid:
            self.session.execute("print(1)", timeout=0)
        self.assertEqual(invalid.exception.status, 422)
        self.assertEqual(invalid.exception.detail[0]["loc"], ["body", "timeout"])
        with self.assertRaises(sandboxd.ValidationError):
            self.client.sessions.create(vcpu_count=3)

    def test_401_and_403_are_authentication_errors(self) -> None:
        with self.assertRaises(sandboxd.AuthenticationError) as wrong:
            sandboxd.Sandboxd(api_key="sbx_sk_wrong", base_url=URL, max_retries=0).sessions.create()
        self.assertEqual(wrong.exception.code, "INVALID_CREDENTIALS")
        if OTHER_API_KEY:
            intruder = sandboxd.Sandboxd(api_key=OTHER_API_KEY, base_url=URL)
            with self.assertRaises(sandboxd.AuthenticationError) as forbidden:
                intruder.sessions.kill(self.session.id)  # 403 on kill, as the original clients read it
            self.assertEqual(forbidden.exception.status, 403)
            with self.assertRaises(sandboxd.SessionError):
                intruder.sessions.status(self.session.id)  # others' sessions are not found

    def test_the_event_stream_replays_the_users_events(self) -> None:
        with self.client.events.stream(last_event_id=0) as stream:
            self.assertIsInstance(stream, sandboxd.EventStream)
            events = [next(stream), next(stream)]
        self.assertTrue(all(isinstance(e, sandboxd.StreamedEvent) and e.id for e in events), events)
        self.assertTrue(all(isinstance(e.data, dict) and e.data.get("type") == e.event for e in events), events)
        self.assertEqual(stream.last_event_id, events[-1].id)
        with self.assertRaises(StopIteration):
            next(stream)  # closed

    def test_zz_kill_ends_the_vm_and_a_second_kill_is_a_session_error(self) -> None:
        killed = self.session.kill()
        self.assertShape(killed, models.PostKillResponse)
        self.assertTrue(killed["success"])
        status = self.session.status()
        self.assertEqual((status["vm_status"], status["vm_alive"], status["expires_in_seconds"]), ("killed", False, 0))
        with self.assertRaises(sandboxd.SessionError):
            self.session.kill()


@live
@unittest.skipUnless(TINY_API_KEY, "set SANDBOXD_TEST_TINY_API_KEY: a user on a plan of 3 executions a minute, 1 VM")
class Limits(ShapeAssertions):
    """429s of a plan with 3 executions a minute and 1 VM. ``max_retries=0``: the client would otherwise wait out
    ``Retry-After`` (when it is at most a minute) and try again, as it should for RATE_LIMITED."""

    def test_429_rate_limited_and_quota_exceeded_map_to_their_classes(self) -> None:
        tiny = client(api_key=TINY_API_KEY, max_retries=0)
        for leftover in tiny.vms.list(status="active"):  # of an earlier run against the same server
            tiny.vms.delete(leftover["vm_id"])
        first = tiny.sessions.create(vcpu_count=1)
        second = tiny.sessions.create(vcpu_count=1)
        try:
            vm = tiny.vms.create(session_id=first.id)  # the plan's one VM (starting a VM is not an execution)
            self.assertShape(vm, models.VmRecord)
            with self.assertRaises(sandboxd.QuotaExceededError) as quota:
                tiny.vms.create(session_id=second.id)
            self.assertEqual((quota.exception.status, quota.exception.code), (429, "QUOTA_EXCEEDED"))
            self.assertNotIsInstance(quota.exception, sandboxd.RateLimitError)
            with self.assertRaises(sandboxd.RateLimitError) as limited:
                for _ in range(6):
                    first.execute_async("print(1)")
            error = limited.exception
            self.assertEqual((error.status, error.code), (429, "RATE_LIMITED"))
            self.assertIsNotNone(error.retry_after)
            self.assertTrue(1 <= error.retry_after <= 60, error.retry_after)
        finally:
            for session in (first, second):
                try:
                    session.kill()
                except sandboxd.SessionError:
                    pass  # no VM
