"""How the clients reach the server (no VMs): one pool of kept-alive connections per client, sync and asyncio;
``verify`` against a local HTTPS server with a certificate of its own; ``proxy`` and the environment's proxy
variables; a caller's own ``http_client``; closing; and streamed answers that outlive the time limit or are
closed from another thread."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shutil
import ssl
import subprocess
import tempfile
import threading
import time
import unittest
import warnings
from pathlib import Path
from typing import Any, List

import httpx

from _support import sandboxd
from test_processes import PROCESS
from test_transport import FakeServer, send_json


class Pooling(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.fake.reply = lambda handler, n: send_json(handler, 200, [])

    def test_the_sync_client_keeps_one_connection_alive_for_its_requests(self) -> None:
        with sandboxd.Sandboxd(api_key="k", base_url=self.fake.url) as client:
            for _ in range(5):
                client.vms.list()
        self.assertEqual(len(self.fake.seen), 5)
        self.assertEqual(len({s.port for s in self.fake.seen}), 1, "five requests, one connection")

    def test_the_asyncio_client_keeps_its_connections_alive_too(self) -> None:
        async def main() -> None:
            async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url) as client:
                for _ in range(5):
                    await client.vms.list()

        asyncio.run(main())
        self.assertEqual(len({s.port for s in self.fake.seen}), 1, "five requests, one connection")

    def test_an_asyncio_client_used_from_a_second_event_loop_gets_a_pool_there(self) -> None:
        client = sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url)
        with warnings.catch_warnings():
            # The first loop's connection cannot be closed from the second: it is let go (a ResourceWarning).
            warnings.simplefilter("ignore", ResourceWarning)
            asyncio.run(client.vms.list())
            asyncio.run(client.vms.list())
            asyncio.run(client.aclose())
            gc.collect()
        self.assertEqual(len(self.fake.seen), 2)

    def test_a_given_http_client_sends_the_requests_and_stays_open(self) -> None:
        sent: List[str] = []
        given = httpx.Client(event_hooks={"request": [lambda request: sent.append(str(request.url))]})
        with sandboxd.Sandboxd(api_key="k", base_url=self.fake.url, http_client=given) as client:
            client.vms.list()
        self.assertEqual(sent, [f"{self.fake.url}/v1/vms"])
        self.assertFalse(given.is_closed, "its owner closes it")
        given.close()
        with self.assertRaises(ValueError):
            sandboxd.Sandboxd(api_key="k", http_client=httpx.Client(), proxy="http://127.0.0.1:1")

        async def main() -> bool:
            async with httpx.AsyncClient() as mine:
                async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url, http_client=mine) as client:
                    await client.vms.list()
                return mine.is_closed

        self.assertFalse(asyncio.run(main()))
        self.assertEqual(len(self.fake.seen), 2)


class Proxies(unittest.TestCase):
    """The fake server stands in for a forward proxy: a request through it names the whole URL."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.fake.reply = lambda handler, n: send_json(handler, 200, [])
        self.saved = {k: os.environ.get(k) for k in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY")}
        for key in self.saved:
            os.environ.pop(key, None)

    def tearDown(self) -> None:
        for key, value in self.saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    def test_requests_go_through_the_proxy_given(self) -> None:
        with sandboxd.Sandboxd(api_key="k", base_url="http://sandboxd.invalid:8080", proxy=self.fake.url) as client:
            self.assertEqual(client.vms.list(), [])

        async def main() -> None:
            async with sandboxd.AsyncSandboxd(
                api_key="k", base_url="http://sandboxd.invalid:8080", proxy=self.fake.url
            ) as client:
                await client.vms.list()

        asyncio.run(main())
        self.assertEqual([s.path for s in self.fake.seen], ["http://sandboxd.invalid:8080/v1/vms"] * 2)
        self.assertEqual(self.fake.seen[0].headers["x-api-key"], "k")

    def test_the_environments_proxy_is_used_and_no_proxy_honoured(self) -> None:
        os.environ["HTTP_PROXY"] = self.fake.url
        with sandboxd.Sandboxd(api_key="k", base_url="http://sandboxd.invalid:8080") as client:
            client.vms.list()
        self.assertEqual(self.fake.seen[-1].path, "http://sandboxd.invalid:8080/v1/vms")
        os.environ["NO_PROXY"] = "127.0.0.1"
        with sandboxd.Sandboxd(api_key="k", base_url=self.fake.url) as client:
            client.vms.list()
        self.assertEqual(self.fake.seen[-1].path, "/v1/vms", "NO_PROXY: straight to the server")


@unittest.skipUnless(shutil.which("openssl"), "openssl makes the test certificate")
class Verification(unittest.TestCase):
    """A local HTTPS server whose certificate no default bundle trusts."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.folder = tempfile.TemporaryDirectory()
        cert, key = Path(cls.folder.name) / "cert.pem", Path(cls.folder.name) / "key.pem"
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
            + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
            check=True,
            capture_output=True,
        )
        cls.cert = cert
        cls.fake = FakeServer()
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert, key)
        cls.fake.httpd.socket = context.wrap_socket(cls.fake.httpd.socket, server_side=True)
        cls.url = cls.fake.url.replace("http://", "https://")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()
        cls.folder.cleanup()

    def setUp(self) -> None:
        self.fake.seen = []
        self.fake.reply = lambda handler, n: send_json(handler, 200, {"status": "ok"})

    def test_an_unknown_certificate_is_refused_once_and_never_retried(self) -> None:
        client = sandboxd.Sandboxd(base_url=self.url, retry_delay=0.01)
        started = time.monotonic()
        with self.assertRaises(sandboxd.NetworkError) as caught:
            client.health()
        self.assertIn("TLS", str(caught.exception))
        self.assertLess(time.monotonic() - started, 2.0, "not retried")
        self.assertEqual(self.fake.seen, [])

    def test_a_ca_bundle_path_an_ssl_context_or_no_verification_is_accepted(self) -> None:
        for verify in (str(self.cert), self.cert, ssl.create_default_context(cafile=str(self.cert)), False):
            with sandboxd.Sandboxd(base_url=self.url, verify=verify) as client:
                self.assertEqual(client.health().status, "ok", verify)

        async def main() -> str:
            async with sandboxd.AsyncSandboxd(base_url=self.url, verify=str(self.cert)) as client:
                return (await client.health()).status

        self.assertEqual(asyncio.run(main()), "ok")
        self.assertEqual(len(self.fake.seen), 5)


def slow_ndjson(handler: Any, n: int) -> None:
    """Output that starts at once, then a line 0.6 s later (past a 0.3 s time limit), then the end."""
    handler.send_response(200)
    handler.send_header("content-type", "application/x-ndjson")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    handler.wfile.flush()
    time.sleep(0.6)
    for event in ({"type": "stdout", "seq": 1, "data": "late\n"}, {"type": "exit", "process": PROCESS}):
        line = json.dumps(event).encode("utf-8") + b"\n"
        handler.wfile.write(f"{len(line):x}\r\n".encode("ascii") + line + b"\r\n")
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def silent_ndjson(handler: Any, n: int) -> None:
    """An answer whose head comes, then nothing for 5 s."""
    handler.send_response(200)
    handler.send_header("content-type", "application/x-ndjson")
    handler.send_header("transfer-encoding", "chunked")
    handler.end_headers()
    handler.wfile.flush()
    time.sleep(5)


class Streams(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def test_a_stream_outlives_the_time_limit_once_its_head_came(self) -> None:
        self.fake.reply = slow_ndjson
        with sandboxd.Sandboxd(api_key="k", base_url=self.fake.url, timeout=0.3) as client:
            with client.processes.output("s-1", "proc_1") as output:
                self.assertEqual([e.type for e in output], ["stdout", "exit"])

        async def main() -> List[str]:
            async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url, timeout=0.3) as client:
                async with await client.processes.output("s-1", "proc_1") as output:
                    return [e.type async for e in output]

        self.assertEqual(asyncio.run(main()), ["stdout", "exit"])

    def test_closing_a_stream_from_another_thread_ends_a_read_under_way(self) -> None:
        self.fake.reply = silent_ndjson
        with sandboxd.Sandboxd(api_key="k", base_url=self.fake.url) as client:
            watch = client.files.watch("s-1", "/root")
            threading.Timer(0.3, watch.close).start()
            started = time.monotonic()
            self.assertEqual(list(watch), [])
            self.assertLess(time.monotonic() - started, 3.0, "the read returned when the stream was closed")

        async def main() -> float:
            async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url) as client:
                watch = await client.files.watch("s-1", "/root")
                asyncio.get_running_loop().call_later(0.3, lambda: asyncio.ensure_future(watch.aclose()))
                started = time.monotonic()
                self.assertEqual([e async for e in watch], [])
                return time.monotonic() - started

        self.assertLess(asyncio.run(main()), 3.0)


if __name__ == "__main__":
    unittest.main()
