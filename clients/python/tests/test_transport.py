"""Requests, retries and time limits against a local ``http.server`` that misbehaves on purpose (no VMs): what
is safe to send again is, with exponential back-off or ``Retry-After``; a POST /execute that may have run is
not; the key goes in a header, never in the URL; uploads are multipart with the fields first."""

from __future__ import annotations

import asyncio
import email.parser
import email.policy
import http.server
import io
import json
import os
import socket
import threading
import time
import unittest
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from _support import sandboxd

Reply = Callable[[http.server.BaseHTTPRequestHandler, int], None]


class Seen:
    def __init__(self, method: str, path: str, headers: Dict[str, str], body: bytes, port: int = 0) -> None:
        self.method, self.path, self.headers, self.body, self.at = method, path, headers, body, time.monotonic()
        #: The client's port: requests on one kept-alive connection share it.
        self.port = port


class QuietServer(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that gave up or reset its connection (time-outs, closed streams, refused TLS)


class FakeServer:
    def __init__(self) -> None:
        self.seen: List[Seen] = []
        self.reply: Reply = lambda handler, n: send_json(handler, 200, {})
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle_one(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                fake.seen.append(Seen(self.command, self.path, headers, body, self.client_address[1]))
                try:
                    fake.reply(self, len(fake.seen))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up first (the time-out tests)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_one

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def send_json(
    handler: http.server.BaseHTTPRequestHandler, status: int, body: Any, headers: Optional[Dict[str, str]] = None
) -> None:
    data = json.dumps(body).encode("utf-8")
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    for name, value in (headers or {}).items():
        handler.send_header(name, value)
    handler.end_headers()
    if handler.command != "HEAD":
        handler.wfile.write(data)


def send_bytes(
    handler: http.server.BaseHTTPRequestHandler, data: bytes, content_type: str = "application/octet-stream"
) -> None:
    handler.send_response(200)
    handler.send_header("content-type", content_type)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class Transport(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.fake.reply = lambda handler, n: send_json(handler, 200, {})

    def client(self, **options: Any) -> sandboxd.Sandboxd:
        return sandboxd.Sandboxd(
            **{"api_key": "sbx_sk_test", "base_url": self.fake.url, "retry_delay": 0.02, **options}
        )

    def test_the_defaults_are_the_typescript_clients(self) -> None:
        c = sandboxd.Sandboxd(api_key="k", base_url=self.fake.url + "/")
        self.assertEqual((c.timeout, c.max_retries, c.retry_delay, c.base_url), (300.0, 3, 1.0, self.fake.url))
        with self.assertRaises(ValueError):
            sandboxd.Sandboxd(api_key="k", max_retries=-1)
        with self.assertRaises(ValueError):
            sandboxd.Sandboxd(api_key="k", base_url="ftp://example.com")
        self.assertEqual(sandboxd.DEFAULT_EXECUTE_TIMEOUT_SECONDS, 15.0)

    def test_the_environment_gives_the_url_and_the_key_which_goes_in_a_header_only(self) -> None:
        saved = {k: os.environ.get(k) for k in ("SANDBOXD_URL", "SANDBOXD_API_KEY")}
        os.environ.update(SANDBOXD_URL=self.fake.url, SANDBOXD_API_KEY="sbx_sk_from_env")
        try:
            c = sandboxd.Sandboxd()
            self.fake.reply = lambda handler, n: send_json(handler, 200, [])
            c.api_keys.list()
            c.sandboxes.list(metadata={"team": "search"})
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
        self.assertEqual([s.headers.get("x-api-key") for s in self.fake.seen], ["sbx_sk_from_env"] * 2)
        self.assertEqual(self.fake.seen[1].path, "/v1/sessions/sandboxes?metadata=%7B%22team%22%3A%22search%22%7D")
        self.assertTrue(all("sbx_sk" not in s.path for s in self.fake.seen), "no key in a URL")
        self.assertTrue(self.fake.seen[0].headers["user-agent"].startswith("sandboxd-python/"))
        token = sandboxd.Sandboxd(api_key="", access_token="tok", base_url=self.fake.url)
        token.vms.list()
        self.assertEqual(self.fake.seen[2].headers.get("authorization"), "Bearer tok")
        self.assertNotIn("x-api-key", self.fake.seen[2].headers)

    def test_a_get_that_fails_twice_with_503_succeeds_on_the_third_try_backing_off(self) -> None:
        self.fake.reply = (
            lambda h, n: send_json(h, 503, {"detail": "busy", "code": "VM_UNAVAILABLE"})
            if n < 3
            else send_json(h, 200, [])
        )
        self.assertEqual(self.client(retry_delay=0.1).vms.list(), [])
        self.assertEqual(len(self.fake.seen), 3)
        gaps = [b.at - a.at for a, b in zip(self.fake.seen, self.fake.seen[1:])]
        self.assertGreaterEqual(gaps[0], 0.09)
        self.assertGreaterEqual(gaps[1], 0.19, "the delay doubles")

    def test_a_post_execute_is_never_sent_twice(self) -> None:
        self.fake.reply = lambda h, n: send_json(h, 503, {"detail": "VM unavailable", "code": "VM_UNAVAILABLE"})
        with self.assertRaises(sandboxd.NetworkError) as caught:
            self.client().execute("print(1)", session_id="s")
        self.assertEqual(len(self.fake.seen), 1)
        self.assertEqual(caught.exception.status, 503)
        self.assertEqual(json.loads(self.fake.seen[0].body)["timeout"], 15.0)

    def test_429_rate_limited_is_retried_after_retry_after_quota_is_not(self) -> None:
        self.fake.reply = lambda h, n: (
            send_json(h, 429, {"detail": "slow down", "code": "RATE_LIMITED"}, {"retry-after": "0"})
            if n == 1
            else send_json(h, 200, {"task_id": 7, "session_id": "s"})
        )
        run = self.client().execute_async("print(1)", session_id="s")
        self.assertEqual((run.id, len(self.fake.seen)), (7, 2))
        self.fake.seen = []
        self.fake.reply = lambda h, n: send_json(h, 429, {"detail": "no more VMs", "code": "QUOTA_EXCEEDED"})
        with self.assertRaises(sandboxd.QuotaExceededError):
            self.client().execute("print(1)", session_id="s")
        self.assertEqual(len(self.fake.seen), 1)
        self.fake.seen = []
        self.fake.reply = lambda h, n: send_json(
            h, 429, {"detail": "later", "code": "RATE_LIMITED"}, {"retry-after": "3600"}
        )
        with self.assertRaises(sandboxd.RateLimitError) as caught:
            self.client().execute("print(1)", session_id="s")
        self.assertEqual(
            (caught.exception.retry_after, len(self.fake.seen)), (3600.0, 1), "too long a wait is the caller's"
        )

    def test_errors_carry_status_code_body_and_request_id(self) -> None:
        self.fake.reply = lambda h, n: send_json(
            h, 404, {"detail": "no such VM", "code": "NOT_FOUND"}, {"x-request-id": "req-9"}
        )
        with self.assertRaises(sandboxd.NotFoundError) as caught:
            self.client().vms.get("vm-x")
        error = caught.exception
        self.assertEqual(
            (str(error), error.status, error.code, error.request_id), ("no such VM", 404, "NOT_FOUND", "req-9")
        )
        self.assertEqual(error.operation, "GET /v1/vms/vm-x")
        self.assertEqual(error.body, {"detail": "no such VM", "code": "NOT_FOUND"})
        self.fake.reply = lambda h, n: send_json(
            h, 408, {"detail": "still running", "code": "EXECUTION_TIMEOUT", "execution_id": 12, "session_id": "s"}
        )
        with self.assertRaises(sandboxd.ExecutionError) as timeout:
            self.client().execute("import time; time.sleep(99)", session_id="s")
        self.assertEqual((timeout.exception.execution_id, timeout.exception.session_id), (12, "s"))

    def test_path_parameters_are_encoded(self) -> None:
        self.fake.reply = lambda h, n: send_json(h, 200, {})
        self.client().sessions.status("a/b c")
        self.assertEqual(self.fake.seen[0].path, "/v1/sessions/status/a%2Fb%20c")

    def test_a_refused_connection_is_retried_then_a_network_error(self) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        c = sandboxd.Sandboxd(api_key="k", base_url=f"http://127.0.0.1:{port}", retry_delay=0.05, max_retries=2)
        started = time.monotonic()
        with self.assertRaises(sandboxd.NetworkError) as caught:
            c.execute("print(1)")  # nothing was sent: even a POST /execute may be sent again
        self.assertGreaterEqual(time.monotonic() - started, 0.14, "two retries, 0.05 s then 0.1 s apart")
        self.assertIn("cannot reach", str(caught.exception))
        self.assertFalse(caught.exception.timed_out)

    def test_a_client_time_out_is_a_network_error_and_not_retried(self) -> None:
        self.fake.reply = lambda h, n: (time.sleep(1.0), send_json(h, 200, []))  # type: ignore[func-returns-value]
        started = time.monotonic()
        with self.assertRaises(sandboxd.NetworkError) as caught:
            self.client(timeout=0.3).vms.list()
        self.assertTrue(caught.exception.timed_out)
        self.assertLess(time.monotonic() - started, 0.9)
        time.sleep(0.8)
        self.assertEqual(len(self.fake.seen), 1)

    def test_uploads_are_multipart_with_the_fields_first(self) -> None:
        self.fake.reply = lambda h, n: send_json(h, 200, {"success": True})
        data = bytes(range(256)) * 40
        self.client().files.upload("sess", data, "/root/dir/", filename='we"ird.bin', recursive=False)
        seen = self.fake.seen[0]
        self.assertTrue(seen.headers["content-type"].startswith("multipart/form-data; boundary="))
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"content-type: " + seen.headers["content-type"].encode() + b"\r\n\r\n" + seen.body
        )
        parts = [(p.get_param("name", header="content-disposition"), p) for p in message.iter_parts()]
        self.assertEqual([name for name, _ in parts], ["session_id", "remote_path", "recursive", "file"])
        self.assertEqual(parts[1][1].get_content(), "/root/dir/")
        self.assertEqual(parts[2][1].get_content(), "false")
        self.assertEqual(parts[3][1].get_payload(decode=True), data)
        self.assertEqual(seen.headers.get("x-api-key"), "sbx_sk_test")

    def test_an_upload_from_a_file_is_sent_again_whole_on_a_retry(self) -> None:
        replies = iter([503, 200])
        self.fake.reply = lambda h, n: send_json(h, next(replies), {"detail": "busy"} if n == 1 else {"success": True})
        stream = io.BytesIO(b"0123456789" * 1000)
        stream.seek(5)
        self.client().files.upload("sess", stream, "/tmp/x")
        self.assertEqual(len(self.fake.seen), 2, "an upload is idempotent: retried")
        self.assertEqual(self.fake.seen[0].body, self.fake.seen[1].body)
        self.assertIn(b"56789" + b"0123456789" * 999 + b"\r\n--", self.fake.seen[1].body)

    def test_downloads_take_raw_bytes_or_base64_json(self) -> None:
        payload = os.urandom(70_000)
        self.fake.reply = lambda h, n: send_bytes(h, payload)
        self.assertEqual(self.client().files.download("s", "/f"), payload)
        self.assertEqual(self.fake.seen[0].headers["accept"], "application/octet-stream")
        import base64

        self.fake.reply = lambda h, n: send_json(
            h, 200, {"content": base64.b64encode(b"abc").decode(), "filename": "f", "path": "/f", "size": 3}
        )
        self.assertEqual(self.client().files.download("s", "/f"), b"abc")
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            self.fake.reply = lambda h, n: send_bytes(h, payload)
            target = Path(folder) / "out.bin"
            self.assertEqual(self.client().files.download_file("s", "/f", target), len(payload))
            self.assertEqual(target.read_bytes(), payload)

    def test_head_check_and_bodyless_answers(self) -> None:
        self.fake.reply = lambda h, n: send_json(h, 200, {})
        self.assertTrue(self.client().api_keys.check())
        self.assertEqual(self.fake.seen[0].method, "HEAD")
        self.fake.reply = lambda h, n: send_json(h, 401, {"detail": "bad key", "code": "INVALID_CREDENTIALS"})
        with self.assertRaises(sandboxd.AuthenticationError):
            self.client().api_keys.check()

    def test_the_async_client_retries_the_same_way_and_runs_requests_at_once(self) -> None:
        self.fake.reply = (
            lambda h, n: send_json(h, 502, {"detail": "bad gateway"})
            if n == 1
            else (time.sleep(0.3), send_json(h, 200, []))[1]
        )

        async def main() -> List[Any]:
            async with sandboxd.AsyncSandboxd(api_key="k", base_url=self.fake.url, retry_delay=0.01) as client:
                started = time.monotonic()
                answers = await asyncio.gather(*(client.vms.list() for _ in range(8)))
                return [answers, time.monotonic() - started]

        answers, elapsed = asyncio.run(main())
        self.assertEqual(answers, [[]] * 8)
        self.assertLess(elapsed, 1.5, "eight 0.3 s requests overlap")
        self.assertEqual(len(self.fake.seen), 9, "one 502 retried")


class BrowserAndDesktopRequests(unittest.TestCase):
    """What the browser and computer-use methods send, and how their errors read (no browser or desktop VM)."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.fake = FakeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.fake.close()

    def setUp(self) -> None:
        self.fake.seen = []
        self.client = sandboxd.Sandboxd(api_key="k", base_url=self.fake.url, retry_delay=0.01)

    def bodies(self) -> List[Any]:
        return [json.loads(s.body) if s.body else None for s in self.fake.seen]

    def test_interactions_send_only_what_was_given(self) -> None:
        self.fake.reply = lambda h, n: send_json(h, 200, {"success": True, "session_id": "bs_1"})
        page = self.client.browser.session("bs_1")
        page.navigate("https://example.com")
        page.click("#go", click_count=2)
        page.scroll(y=300)
        with self.assertRaises(TypeError):
            page.scroll()
        self.assertEqual(
            [s.path for s in self.fake.seen], [f"/v1/browser/interactions/{x}" for x in ("navigate", "click", "scroll")]
        )
        self.assertEqual(
            self.bodies(),
            [
                {"session_id": "bs_1", "url": "https://example.com"},
                {"session_id": "bs_1", "selector": "#go", "click_count": 2},
                {"session_id": "bs_1", "y": 300},
            ],
        )

    def test_interaction_errors_read_as_the_browser_family(self) -> None:
        page = self.client.browser.session("bs_1")
        self.fake.reply = lambda h, n: send_json(
            h, 404, {"detail": "no element", "code": "ELEMENT_NOT_FOUND", "selector": "#x"}
        )
        with self.assertRaises(sandboxd.ElementNotFoundError) as missing:
            page.click("#x")
        self.assertEqual(missing.exception.selector, "#x")
        self.fake.reply = lambda h, n: send_json(h, 404, {"detail": "closed", "code": "NOT_FOUND"})
        with self.assertRaises(sandboxd.BrowserSessionError):
            page.navigate("https://example.com")
        self.assertFalse(page.close())
        self.fake.reply = lambda h, n: send_json(h, 408, {"detail": "slow", "code": "BROWSER_TIMEOUT"})
        with self.assertRaises(sandboxd.BrowserTimeoutError):
            page.wait("selector", selector="#late", timeout=10)
        self.fake.reply = lambda h, n: send_json(
            h, 400, {"detail": "net::ERR_NAME_NOT_RESOLVED", "code": "NAVIGATION_FAILED"}
        )
        with self.assertRaises(sandboxd.BrowserNavigationError):
            page.navigate("https://nowhere.invalid")
        self.fake.reply = lambda h, n: send_json(h, 429, {"detail": "all open", "code": "LIMIT"})
        with self.assertRaises(sandboxd.QuotaExceededError):
            self.client.browser.create_session()

    def test_screenshots_are_decoded(self) -> None:
        import base64

        png = b"\x89PNG\r\n\x1a\n" + os.urandom(100)
        answer = {"screenshot": base64.b64encode(png).decode(), "format": "png", "width": 10, "height": 20}
        self.fake.reply = lambda h, n: send_json(h, 200, answer)
        image = self.client.browser.session("bs_1").screenshot(full_page=True)
        self.assertEqual((image.data, image.format, image.width, image.height), (png, "png", 10, 20))
        self.assertEqual(self.bodies(), [{"session_id": "bs_1", "full_page": True}])

    def test_desktop_actions_go_through_the_proxy(self) -> None:
        self.fake.reply = lambda h, n: send_json(h, 200, {"action": "x", "elapsed_ms": 1, "cursor": {"x": 1, "y": 2}})
        desktop = self.client.computer_use.connect("s/1")
        desktop.click(10, 20, count=2)
        desktop.scroll("down", 5, at=(1, 2))
        self.assertEqual(desktop.cursor_position(), {"x": 1, "y": 2})
        self.assertEqual({s.path for s in self.fake.seen}, {"/v1/computeruse/s%2F1/action"})
        self.assertEqual(
            self.bodies(),
            [
                {"action": "double_click", "coordinate": [10, 20]},
                {"action": "scroll", "scroll_direction": "down", "scroll_amount": 5, "coordinate": [1, 2]},
                {"action": "cursor_position"},
            ],
        )
        self.fake.seen = []
        self.fake.reply = lambda h, n: send_bytes(h, b"\x89PNG...", "image/png")
        self.assertEqual(desktop.screenshot(scale=0.5), b"\x89PNG...")
        self.assertEqual(self.fake.seen[0].path, "/v1/computeruse/s%2F1/screenshot?scale=0.5")


if __name__ == "__main__":
    unittest.main()
