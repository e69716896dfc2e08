"""A terminal attached over a WebSocket, for the asyncio client: the ``websockets`` library's asyncio client,
with a reader task that hands output over and keeps the terminal's control messages.

Hand-written (not the source of ``_sync/_terminal.py``, which runs this very class on an event loop of its own).
``websockets.legacy.client`` is the asyncio client that Debian 12's websockets (10.4) has and later versions keep
(as ``websockets.client.connect``; their newer ``websockets.asyncio`` client is 13+ only).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Dict, Optional, Tuple, Union

from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI
from websockets.legacy.client import WebSocketClientProtocol, connect

from .._http import CONNECT_TIMEOUT_SECONDS, Request, Settings, headers_for
from ..errors import NetworkError, SandboxdError, error_for

__all__ = ["AsyncTerminalConnection", "TerminalExit", "OnData", "websocket_url", "handshake_headers"]

#: The largest message accepted from the server (terminal output comes in small chunks anyway).
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: The most of a refused handshake's body that is read (its JSON error).
MAX_REFUSAL_BYTES = 64 * 1024

_END = object()
#: Called with each piece of output: a function or a coroutine function.
OnData = Callable[[bytes], Union[None, Awaitable[None]]]


@dataclass(frozen=True)
class TerminalExit:
    """How a terminal's program ended."""

    exit_code: Optional[int]
    signal: Optional[str]


def websocket_url(settings: Settings, path: str) -> str:
    """``ws(s)://host[:port][/prefix]{path}`` of the client's base URL."""
    scheme, rest = settings.base_url.split("://", 1)
    return ("wss" if scheme == "https" else "ws") + "://" + rest + path


def handshake_headers(settings: Settings, path: str) -> Dict[str, str]:
    """The handshake's headers: the client's credentials (X-API-Key or a bearer token; never in the URL) and its
    extra headers, as on every request."""
    headers = headers_for(settings, Request("GET", path))
    headers.pop("accept", None)
    return headers


def _refusal(operation: str, status: int, headers: Headers, body: bytes) -> SandboxdError:
    """The error for a refused handshake, from the same table as every answer (401, 404, 410 VM_GONE…)."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed: Any = json.loads(text) if text else None
    except ValueError:
        parsed = None
    fields = parsed if isinstance(parsed, dict) else {}
    code = fields.get("code") if isinstance(fields.get("code"), str) else None
    detail = fields.get("detail")
    message = detail if isinstance(detail, str) else f"{operation}: the WebSocket handshake answered {status}"
    return error_for(
        status,
        code,
        None,
        message,
        body=parsed if parsed is not None else text,
        operation=operation,
        request_id=headers.get("x-request-id"),
    )


class _Protocol(WebSocketClientProtocol):
    """Reads the body of a refused handshake (the server's JSON error), which ``websockets`` leaves unread."""

    operation = "attach terminal"

    async def read_http_response(self) -> Tuple[int, Headers]:
        status, headers = await super().read_http_response()
        if status != 101:
            length = min(int(headers.get("content-length", "0") or 0), MAX_REFUSAL_BYTES)
            try:
                body = await asyncio.wait_for(self.reader.readexactly(length), CONNECT_TIMEOUT_SECONDS)
            except (asyncio.IncompleteReadError, asyncio.TimeoutError):
                body = b""
            raise _refusal(self.operation, status, headers, body)
        return status, headers


class AsyncTerminalConnection:
    """A live attachment to a terminal (asyncio). Output: ``await recv()``, ``await read_until()``,
    ``async for``, or an ``on_data`` callback (a function or a coroutine function); input: ``await write()``;
    ``await resize()``; ``await wait()`` for how the program ended. Closing only detaches.
    """

    def __init__(self, websocket: WebSocketClientProtocol, pty_id: str, on_data: Optional[OnData]):
        self.pty_id = pty_id
        #: How the program ended, once the server said (None while it runs, or when the connection closed first).
        self.exit: Optional[TerminalExit] = None
        #: The WebSocket close code, once closed (1005 when the server sent none, 1006 when the connection broke).
        self.close_code: Optional[int] = None
        #: The last ``{"type": "error"}`` message the server sent (or what ``on_data`` raised), if any.
        self.last_error: Optional[str] = None
        self._websocket = websocket
        self._on_data = on_data
        self._chunks: "asyncio.Queue[object]" = asyncio.Queue()
        self._pending = b""
        self._closed = asyncio.Event()
        self._detaching = False
        self._task = asyncio.ensure_future(self._read())

    @classmethod
    async def connect(
        cls, settings: Settings, path: str, pty_id: str, on_data: Optional[OnData] = None
    ) -> "AsyncTerminalConnection":
        """Opens the WebSocket at ``path`` (the terminal's ``…/connect``) with the client's credentials."""
        operation = f"attach terminal {pty_id}"
        url = websocket_url(settings, path)
        headers = handshake_headers(settings, path)
        protocol = type("_TerminalProtocol", (_Protocol,), {"operation": operation})
        open_timeout = settings.timeout if settings.timeout > 0 else None
        try:
            websocket = await connect(
                url,
                create_protocol=protocol,
                extra_headers=headers,
                # Ours is in `headers` (sandboxd-python/...), as on every request.
                user_agent_header=None,
                ssl=settings.ssl_context if url.startswith("wss:") else None,
                open_timeout=open_timeout,
                max_size=MAX_MESSAGE_BYTES,
                # No permessage-deflate: terminal output is small and frequent (the old client had none either).
                compression=None,
                # The server's pings are answered; the client sends none, so a slow on_data cannot drop the terminal.
                ping_interval=None,
                close_timeout=5,
            )
        except SandboxdError:
            raise
        except asyncio.TimeoutError as error:
            raise NetworkError(
                f"{operation}: no WebSocket handshake within {settings.timeout:g} s",
                operation=operation,
                timed_out=True,
            ) from error
        except (OSError, InvalidHandshake, InvalidURI) as error:
            raise NetworkError(
                f"{operation}: cannot reach {settings.base_url} ({error})", operation=operation
            ) from error
        return cls(websocket, pty_id, on_data)

    # -- reading -------------------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for message in self._websocket:
                if isinstance(message, bytes):
                    await self._deliver(message)
                    continue
                try:
                    control = json.loads(message)
                except ValueError:
                    continue
                if not isinstance(control, dict):
                    continue
                if control.get("type") == "exit":
                    self.exit = TerminalExit(control.get("exit_code"), control.get("signal"))
                elif control.get("type") == "error":
                    self.last_error = str(control.get("message"))
        except (ConnectionClosed, OSError, asyncio.CancelledError):
            pass
        except Exception as error:  # raised by on_data: the connection cannot hand output over any more
            self.last_error = f"on_data raised {error!r}"
            asyncio.get_running_loop().call_exception_handler(
                {"message": f"terminal {self.pty_id}: on_data raised; detached", "exception": error}
            )
            await self._websocket.close(1011, "on_data failed")
        finally:
            await self._websocket.wait_closed()
            self.close_code = self._websocket.close_code
            self._chunks.put_nowait(_END)
            self._closed.set()

    async def _deliver(self, chunk: bytes) -> None:
        if self._on_data is None:
            self._chunks.put_nowait(chunk)
            return
        result = self._on_data(chunk)
        if asyncio.iscoroutine(result):
            await result

    async def recv(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next piece of output (the scrollback first, then live), or None once the connection closed.

        Raises ``TimeoutError`` when ``timeout`` seconds pass with nothing new.
        """
        if self._on_data is not None:
            raise SandboxdError("this connection hands its output to on_data: recv() has nothing to read")
        if self._pending:
            chunk, self._pending = self._pending, b""
            return chunk
        try:
            item = await asyncio.wait_for(self._chunks.get(), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"no output from terminal {self.pty_id} within {timeout} s") from None
        if item is _END:
            self._chunks.put_nowait(_END)
            return None
        assert isinstance(item, bytes)
        return item

    async def read_until(self, marker: Union[str, bytes], timeout: float = 30.0) -> bytes:
        """Reads output until ``marker`` appears; answers everything up to and including it.

        Raises ``TimeoutError`` (with what was read) when it does not appear within ``timeout`` seconds, and
        ``EOFError`` when the connection closes first.
        """
        wanted = marker.encode("utf-8") if isinstance(marker, str) else marker
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        seen = b""
        while True:
            found = seen.find(wanted)
            if found >= 0:
                end = found + len(wanted)
                self._pending = seen[end:] + self._pending
                return seen[:end]
            remaining = deadline - loop.time()
            if remaining <= 0:
                self._pending = seen + self._pending
                raise TimeoutError(
                    f"no {marker!r} from terminal {self.pty_id} within {timeout} s; read: {seen[-500:]!r}"
                )
            try:
                chunk = await self.recv(timeout=remaining)
            except TimeoutError:
                continue
            if chunk is None:
                raise EOFError(f"terminal {self.pty_id} closed before {marker!r}; read: {seen[-500:]!r}")
            seen += chunk

    def __aiter__(self) -> "AsyncTerminalConnection":
        return self

    async def __anext__(self) -> bytes:
        chunk = await self.recv()
        if chunk is None:
            raise StopAsyncIteration
        return chunk

    # -- writing -------------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed.is_set() or self._detaching:
            raise SandboxdError(f"the connection to terminal {self.pty_id} is closed")

    async def write(self, data: Union[str, bytes]) -> None:
        """Input, as if typed (a str is sent as UTF-8; "\\r" is Enter)."""
        self._check_open()
        try:
            # Binary frames: the terminal protocol's text frames are control messages (resize).
            await self._websocket.send(data.encode("utf-8") if isinstance(data, str) else bytes(data))
        except (ConnectionClosed, OSError) as error:
            raise NetworkError(f"could not write to terminal {self.pty_id}: {error}") from error

    async def resize(self, cols: int, rows: int) -> None:
        """Resizes the terminal; its program gets SIGWINCH."""
        self._check_open()
        try:
            await self._websocket.send(json.dumps({"type": "resize", "cols": cols, "rows": rows}))
        except (ConnectionClosed, OSError) as error:
            raise NetworkError(f"could not resize terminal {self.pty_id}: {error}") from error

    # -- the end -------------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait(self, timeout: Optional[float] = None) -> Optional[TerminalExit]:
        """Waits until the connection closes; answers how the program ended (None when it was only detached).

        Raises ``TimeoutError`` when it is still open after ``timeout`` seconds.
        """
        try:
            await asyncio.wait_for(self._closed.wait(), timeout)
        except asyncio.TimeoutError:
            raise TimeoutError(f"terminal {self.pty_id} is still running after {timeout} s") from None
        return self.exit

    async def close(self, timeout: float = 5.0) -> None:
        """Detaches: the closing handshake, then the connection (at most ``timeout`` seconds)."""
        if self._closed.is_set():
            return
        self._detaching = True
        try:
            await asyncio.wait_for(self._websocket.close(1000), timeout)
            await asyncio.wait_for(self._closed.wait(), timeout)
        except asyncio.TimeoutError:
            self._websocket.transport.abort()
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=timeout)

    async def __aenter__(self) -> "AsyncTerminalConnection":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
