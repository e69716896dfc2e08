"""Terminals over a local WebSocket server that speaks the terminal protocol (the ``websockets`` library's
server, no VMs): output, input, resize and the exit message, sync and asyncio; ``write()`` from an ``on_data``
callback; the key in the handshake's headers; a refused handshake as the server's error class."""

from __future__ import annotations

import asyncio
import http
import json
import threading
import unittest
from typing import Any, Dict, List, Optional

import websockets.exceptions
import websockets.legacy.server

from _support import sandboxd

PATH = "/v1/sessions/s-1/pty/sessions/pty-1/connect"


class FakeTerminal:
    """One terminal: it prints a prompt, echoes each input as ``got-<input>``, reports resizes as ``size-<cols>x<rows>``
    and exits with code 3 on ``exit``."""

    def __init__(self) -> None:
        self.headers: List[Dict[str, str]] = []
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._main, daemon=True)
        self.thread.start()
        self.ready.wait(10)

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            websockets.legacy.server.serve(self._session, "127.0.0.1", 0, process_request=self._check)
        )
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        self.ready.set()
        self.loop.run_forever()

    async def _check(self, path: str, headers: Any) -> Optional[Any]:
        self.headers.append({k.lower(): v for k, v in headers.raw_items()})
        if path != PATH:
            body = json.dumps({"detail": "No such terminal", "code": "NOT_FOUND"}).encode()
            return http.HTTPStatus.NOT_FOUND, [("content-type", "application/json")], body
        return None

    async def _session(self, websocket: Any, path: str) -> None:
        try:
            await self._talk(websocket)
        except websockets.exceptions.ConnectionClosed:
            pass  # the client went away

    async def _talk(self, websocket: Any) -> None:
        await websocket.send(b"prompt> ")
        async for message in websocket:
            if isinstance(message, str):
                control = json.loads(message)
                await websocket.send(f"size-{control['cols']}x{control['rows']}\n".encode())
            elif message.strip() == b"exit":
                await websocket.send(json.dumps({"type": "exit", "exit_code": 3, "signal": None}))
                await websocket.close(1000)
                return
            else:
                await websocket.send(b"got-" + message.strip() + b"\n")

    def close(self) -> None:
        async def stop() -> None:
            self.server.close()
            await self.server.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


class TerminalSockets(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeTerminal()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def test_the_sync_connection_reads_writes_resizes_and_sees_the_exit(self) -> None:
        with sandboxd.Sandboxd(api_key="sbx_sk_t", base_url=self.fake.url) as client:
            with client.terminals.attach("pty-1", session_id="s-1") as terminal:
                self.assertEqual(terminal.read_until("prompt> ", timeout=10), b"prompt> ")
                terminal.write("abc\r")
                self.assertIn(b"got-abc", terminal.read_until("got-abc", timeout=10))
                terminal.resize(120, 40)
                self.assertIn(b"size-120x40", terminal.read_until("size-120x40", timeout=10))
                terminal.write("exit\r")
                self.assertEqual(terminal.wait(timeout=10), sandboxd.TerminalExit(exit_code=3, signal=None))
                self.assertEqual(terminal.close_code, 1000)
                self.assertEqual(b"".join(terminal), b"\n", "what was left after the marker, then the end")
                self.assertIsNone(terminal.recv(timeout=1), "closed: nothing more to read")
        headers = self.fake.headers[-1]
        self.assertEqual(headers["x-api-key"], "sbx_sk_t", "the key in a header, never in the URL")
        self.assertTrue(headers["user-agent"].startswith("sandboxd-python/"))

    def test_on_data_may_write_back_and_close_from_its_own_thread(self) -> None:
        seen: List[bytes] = []
        done = threading.Event()

        with sandboxd.Sandboxd(api_key="k", base_url=self.fake.url) as client:

            def on_data(chunk: bytes) -> None:
                seen.append(chunk)
                if b"got-start" in chunk:
                    terminal.write("from-callback\r")  # sent once the callback returns
                elif b"got-from-callback" in chunk:
                    terminal.close()
                    done.set()

            terminal = client.terminals.attach("pty-1", session_id="s-1", on_data=on_data)
            terminal.write("start\r")
            self.assertTrue(done.wait(10), seen)
            terminal.close()  # already closing: nothing more to do
        self.assertIn(b"got-from-callback\n", seen)
        self.assertIsNone(terminal.exit, "detached, not ended")
        self.assertTrue(terminal.closed)

    def test_a_failing_on_data_detaches_with_code_1011(self) -> None:
        def on_data(chunk: bytes) -> None:
            raise ValueError("a bug in the callback")

        with sandboxd.Sandboxd(api_key="k", base_url=self.fake.url) as client, self.assertLogs(
            "asyncio", "ERROR"
        ) as logs:
            terminal = client.terminals.attach("pty-1", session_id="s-1", on_data=on_data)
            self.assertIsNone(terminal.wait(timeout=10))
            self.assertIn("on_data raised; detached", logs.output[0])
            self.assertEqual(terminal.close_code, 1011)
            self.assertIn("a bug in the callback", terminal.last_error or "")
            terminal.close()

    def test_the_asyncio_connection_does_the_same(self) -> None:
        async def main() -> Optional[sandboxd.TerminalExit]:
            async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url) as client:
                async with await client.terminals.attach("pty-1", session_id="s-1") as terminal:
                    await terminal.read_until("prompt> ", timeout=10)
                    await terminal.write("xyz\r")
                    await terminal.read_until("got-xyz", timeout=10)
                    await terminal.write("exit\r")
                    return await terminal.wait(timeout=10)

        self.assertEqual(asyncio.run(main()), sandboxd.TerminalExit(3, None))

    def test_a_refused_handshake_raises_the_servers_error(self) -> None:
        with sandboxd.Sandboxd(api_key="k", base_url=self.fake.url) as client:
            with self.assertRaises(sandboxd.NotFoundError) as caught:
                client.terminals.attach("pty-2", session_id="s-1")
        self.assertEqual((str(caught.exception), caught.exception.code), ("No such terminal", "NOT_FOUND"))


if __name__ == "__main__":
    unittest.main()
