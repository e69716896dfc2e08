"""The walk-through with ``AsyncSandboxd`` on real VMs: the same surface, awaited. Runs overlap (gather),
an async run is polled with asyncio sleeps, a terminal is read over its asyncio WebSocket, a directory is watched
(``async for``), background processes hand their output to a coroutine callback and take stdin, a signal and
kill, the event stream is followed, and the error classes are the same."""

from __future__ import annotations

import asyncio
import hashlib
import os
import time
import unittest
import uuid

from _support import FIRST_CALL_TIMEOUT, ShapeAssertions, async_client, live, models, sandboxd


@live
class AsyncWalkThrough(ShapeAssertions, unittest.IsolatedAsyncioTestCase):
    async def test_the_walk_through_with_the_asyncio_client(self) -> None:
        async with async_client() as client:
            async with await client.sessions.create(vcpu_count=1, metadata={"suite": "python-async"}) as session:
                self.assertIsInstance(session, sandboxd.AsyncSession)
                first = await session.execute("x = 21", timeout=FIRST_CALL_TIMEOUT)
                self.assertEqual(first["exit_code"], 0)

                # Several requests at once: each runs in one of the client's threads, none blocks the loop.
                result, status, health = await asyncio.gather(
                    session.execute("print(x * 2)"), session.status(), client.health()
                )
                self.assertEqual(result["stdout"], "42\n")
                self.assertShape(status, models.SessionStatus)
                self.assertEqual(health, {"status": "ok"})

                bash = await session.execute("echo out; exit 3", language="bash")
                self.assertEqual((bash["exit_code"], bash["stdout"]), (3, "out\n"))

                data = os.urandom(100_000)
                await session.upload(data, "/tmp/async.bin")
                self.assertEqual(await session.download("/tmp/async.bin"), data)
                digest = await session.execute("sha256sum /tmp/async.bin | cut -d' ' -f1", language="bash")
                self.assertEqual(digest["stdout"].strip(), hashlib.sha256(data).hexdigest())

                run = await session.execute_async("import time\ntime.sleep(1)\nprint('done', x)")
                self.assertIsInstance(run, sandboxd.AsyncExecutionRun)
                ticks = 0

                async def tick() -> None:
                    nonlocal ticks
                    while True:
                        await asyncio.sleep(0.05)
                        ticks += 1

                ticker = asyncio.ensure_future(tick())
                record = await run.wait(poll_interval=0.25)
                ticker.cancel()
                self.assertShape(record, models.TaskRecord)
                self.assertEqual(record["serialized_stdout"], "done 21\n")
                self.assertGreater(ticks, 5, "the loop ran while the run was polled")

                pty = await session.create_terminal(cols=100, rows=30, command="stty size; read x; echo got-$x")
                terminal = await session.attach_terminal(pty["pty_id"])
                self.assertIsInstance(terminal, sandboxd.AsyncTerminalConnection)
                await terminal.read_until("30 100", timeout=30)
                await terminal.write("xyz\r")
                await terminal.read_until("got-xyz", timeout=30)
                self.assertEqual(await terminal.wait(timeout=30), sandboxd.TerminalExit(0, None))

                # The file verbs, awaited: made, moved, described, removed.
                self.assertIs(await session.mkdir("/tmp/async-dir/sub"), True)
                await session.upload("x", "/tmp/async-dir/sub/a.txt")
                moved = await session.rename("/tmp/async-dir/sub/a.txt", "/tmp/async-dir/b.txt")
                self.assertEqual((moved["path"], moved["size"]), ("/tmp/async-dir/b.txt", 1))
                self.assertEqual((await session.stat("/tmp/async-dir/sub"))["type"], "directory")
                self.assertIs(await session.exists("/tmp/async-dir/sub/a.txt"), False)
                self.assertIs(await session.remove("/tmp/async-dir", recursive=True), True)
                self.assertIs(await session.exists("/tmp/async-dir"), False)
                with self.assertRaises(sandboxd.NotFoundError):
                    await session.stat("/tmp/async-dir")

                # A directory watched: its changes in order, until the stream is closed.
                watched, note = "/root/watched-async", "/root/watched-async/a.txt"
                self.assertIs(await session.mkdir(watched), True)
                changes = []
                async with await session.watch(watched, recursive=True) as watch:
                    self.assertIsInstance(watch, sandboxd.AsyncFileWatchStream)

                    async def follow() -> None:
                        async for event in watch:
                            self.assertShape(event, models.FileWatchEvent)
                            changes.append((event["type"], event.get("path")))
                            if event["type"] == "start":
                                await session.execute(f"echo hi > {note} && rm {note}", language="bash")
                            elif (event["type"], event.get("path")) == ("remove", note):
                                return

                    await asyncio.wait_for(follow(), timeout=120)  # cancelled: the stream is closed
                self.assertEqual(changes[0], ("start", watched))
                of_note = [kind for kind, path in changes if path == note]
                self.assertEqual((of_note[0], of_note[-1]), ("create", "remove"), changes)
                self.assertEqual([event async for event in watch], [], "closed by leaving the block")
                with self.assertRaises(sandboxd.NotFoundError):
                    await session.watch("/root/watched-async-missing")
                self.assertIs(await session.remove(watched, recursive=True), True)

                # Background processes, awaited: output to a coroutine callback, stdin, a signal, kill.
                chunks = []

                async def on_stdout(text: str) -> None:
                    chunks.append(text)

                ended = await session.run_process("echo a; sleep 0.2; echo b", on_stdout=on_stdout)
                self.assertShape(ended, models.ProcessInfo)
                self.assertEqual(("".join(chunks), ended["exit_code"], ended["status"]), ("a\nb\n", 0, "exited"))
                cat = await client.processes.start(session.id, argv=["cat"], stdin=True)
                await session.send_stdin(cat["process_id"], "from ")
                await session.send_stdin(cat["process_id"], b"asyncio\n", eof=True)
                stream = await session.process_output(cat["process_id"], follow=True)
                self.assertIsInstance(stream, sandboxd.AsyncProcessEventStream)
                async with stream:
                    events = [event async for event in stream]
                self.assertEqual("".join(e["data"] for e in events if e["type"] == "stdout"), "from asyncio\n")
                self.assertEqual((events[-1]["type"], events[-1]["process"]["exit_code"]), ("exit", 0))
                trapped = await session.start_process("trap 'exit 7' TERM; echo ready; while true; do sleep 0.1; done")
                async with await session.process_output(trapped["process_id"]) as stream:
                    async for event in stream:
                        if event["type"] == "stdout" and "ready" in event["data"]:
                            await session.signal_process(trapped["process_id"], "SIGTERM")
                self.assertEqual((stream.process or {}).get("exit_code"), 7)
                sleeper = await session.start_process("sleep 1000")
                listed = await session.processes()
                self.assertIn(sleeper["process_id"], [p["process_id"] for p in listed])
                killed = await client.processes.kill(session.id, sleeper["process_id"])
                self.assertEqual((killed["status"], killed["signal"]), ("exited", "SIGKILL"))
                with self.assertRaises(sandboxd.NotFoundError):
                    await session.download("/tmp/missing")
                with self.assertRaises(sandboxd.SessionError):
                    await client.sessions.connect(str(uuid.uuid4())).status()
                with self.assertRaises(sandboxd.ValidationError):
                    await session.execute("print(1)", timeout=601)
            # Leaving the block killed the VM.
            self.assertEqual((await session.status())["vm_status"], "killed")

    async def test_the_event_stream_replays_and_follows(self) -> None:
        async with async_client() as client:
            stream = await client.events.stream(last_event_id=0)
            seen = []
            async with stream:
                async for event in stream:
                    self.assertIsInstance(event, sandboxd.StreamedEvent)
                    seen.append(event)
                    if len(seen) == 2:
                        break
            self.assertTrue(all(e.id for e in seen))
            self.assertTrue(all(isinstance(e.data, dict) and e.data.get("type") == e.event for e in seen), seen)

    async def test_cancelling_a_request_ends_it(self) -> None:
        async with async_client() as client:
            session = await client.sessions.create(vcpu_count=1)
            started = time.monotonic()
            task = asyncio.ensure_future(session.execute("import time; time.sleep(30)", timeout=60))
            await asyncio.sleep(1.0)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            self.assertLess(time.monotonic() - started, 10)
            try:
                await session.kill()
            except sandboxd.SessionError:
                pass
