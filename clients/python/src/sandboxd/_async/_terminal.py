"""A terminal attached over a WebSocket, for the asyncio client: the standard-library RFC 6455 client of
``_websocket.py`` over ``asyncio`` streams, with a reader task that answers pings and hands output over.

Hand-written (not the source of ``_sync/_terminal.py``): streams and tasks here, sockets and threads there.
"""

from __future__ import annotations

import asyncio
import ssl
from typing import Awaitable, Callable, Optional, Union

from .._http import CONNECT_TIMEOUT_SECONDS, Settings
from .._websocket import (
    MAX_HANDSHAKE_BYTES,
    OP_BINARY,
    OP_CLOSE,
    OP_PONG,
    FrameParser,
    TerminalExit,
    WebSocketTarget,
    check_accept,
    close_payload,
    encode_frame,
    handshake_error,
    parse_control,
    parse_handshake,
    resize_message,
)
from ..errors import NetworkError, SandboxdError

__all__ = ["AsyncTerminalConnection", "TerminalExit"]

_END = object()
OnData = Callable[[bytes], Union[None, Awaitable[None]]]


class AsyncTerminalConnection:
    """A live attachment to a terminal (asyncio). Output: ``await recv()``, ``await read_until()``,
    ``async for``, or an ``on_data`` callback (a function or a coroutine function); input: ``await write()``;
    ``await resize()``; ``await wait()`` for how the program ended. Closing only detaches.
    """

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        leftover: bytes,
        pty_id: str,
        on_data: Optional[OnData],
    ):
        self.pty_id = pty_id
        #: How the program ended, once the server said (None while it runs, or when the connection closed first).
        self.exit: Optional[TerminalExit] = None
        #: The WebSocket close code, once closed (1005 when the server sent none, 1006 when the connection broke).
        self.close_code: Optional[int] = None
        #: The last ``{"type": "error"}`` message the server sent, if any.
        self.last_error: Optional[str] = None
        self._reader = reader
        self._writer = writer
        self._on_data = on_data
        self._chunks: "asyncio.Queue[object]" = asyncio.Queue()
        self._pending = b""
        self._ended = False
        self._closed = asyncio.Event()
        self._close_sent = False
        self._parser = FrameParser()
        self._task = asyncio.ensure_future(self._read(leftover))

    @classmethod
    async def connect(
        cls, settings: Settings, path: str, pty_id: str, on_data: Optional[OnData] = None
    ) -> "AsyncTerminalConnection":
        """Opens the WebSocket at ``path`` (the terminal's ``…/connect``) with the client's credentials."""
        target = WebSocketTarget(settings, path, f"attach terminal {pty_id}")
        connect_timeout = (
            min(settings.timeout, CONNECT_TIMEOUT_SECONDS) if settings.timeout > 0 else CONNECT_TIMEOUT_SECONDS
        )
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(
                    target.host,
                    target.port,
                    ssl=ssl.create_default_context() if target.tls else None,
                    limit=MAX_HANDSHAKE_BYTES,
                ),
                connect_timeout,
            )
        except (OSError, asyncio.TimeoutError) as error:
            raise NetworkError(f"{target.operation}: cannot reach {settings.base_url} ({error!r})") from error
        try:
            writer.write(target.request)
            await writer.drain()
            try:
                head = await asyncio.wait_for(
                    reader.readuntil(b"\r\n\r\n"), settings.timeout if settings.timeout > 0 else None
                )
            except asyncio.IncompleteReadError as error:
                raise NetworkError(
                    f"{target.operation}: the server closed the connection during the handshake"
                ) from error
            except asyncio.LimitOverrunError as error:
                raise NetworkError(f"{target.operation}: the handshake answer is too long") from error
            status, reason, headers = parse_handshake(head[:-4])
            if status != 101:
                length = min(int(headers.get("content-length", "0") or 0), MAX_HANDSHAKE_BYTES)
                try:
                    body = await asyncio.wait_for(reader.readexactly(length), CONNECT_TIMEOUT_SECONDS)
                except (asyncio.IncompleteReadError, asyncio.TimeoutError):
                    body = b""
                raise handshake_error(target, status, reason, headers, body)
            check_accept(target, headers)
        except BaseException as error:
            writer.close()
            if isinstance(error, (OSError, asyncio.TimeoutError)) and not isinstance(error, SandboxdError):
                raise NetworkError(f"{target.operation}: the WebSocket handshake failed ({error!r})") from error
            raise
        return cls(reader, writer, b"", pty_id, on_data)

    # -- reading -------------------------------------------------------------------------------------------

    async def _read(self, leftover: bytes) -> None:
        code = 1006
        try:
            data = leftover
            while True:
                for message in self._parser.feed(data):
                    if message.kind == "binary":
                        await self._deliver(message.data)
                    elif message.kind == "text":
                        control = parse_control(message.data) or {}
                        if control.get("type") == "exit":
                            self.exit = TerminalExit(control.get("exit_code"), control.get("signal"))
                        elif control.get("type") == "error":
                            self.last_error = str(control.get("message"))
                    elif message.kind == "ping":
                        await self._send(OP_PONG, message.data)
                    elif message.kind == "close":
                        code = message.close_code if message.close_code is not None else 1005
                        await self._send_close(code if message.close_code is not None else 1000)
                        return
                data = await self._reader.read(65536)
                if not data:
                    return
        except (OSError, SandboxdError, asyncio.CancelledError):
            return
        finally:
            self.close_code = code
            self._ended = True
            self._chunks.put_nowait(_END)
            self._closed.set()
            self._writer.close()

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

    async def _send(self, opcode: int, payload: bytes) -> None:
        self._writer.write(encode_frame(opcode, payload))
        await self._writer.drain()

    async def _send_close(self, code: int) -> None:
        if self._close_sent:
            return
        self._close_sent = True
        try:
            await self._send(OP_CLOSE, close_payload(code))
        except OSError:
            pass

    def _check_open(self) -> None:
        if self._ended or self._close_sent:
            raise SandboxdError(f"the connection to terminal {self.pty_id} is closed")

    async def write(self, data: Union[str, bytes]) -> None:
        """Input, as if typed (a str is sent as UTF-8; "\\r" is Enter)."""
        self._check_open()
        try:
            await self._send(OP_BINARY, data.encode("utf-8") if isinstance(data, str) else bytes(data))
        except OSError as error:
            raise NetworkError(f"could not write to terminal {self.pty_id}: {error}") from error

    async def resize(self, cols: int, rows: int) -> None:
        """Resizes the terminal; its program gets SIGWINCH."""
        self._check_open()
        try:
            self._writer.write(resize_message(cols, rows))
            await self._writer.drain()
        except OSError as error:
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
        if not self._closed.is_set():
            await self._send_close(1000)
            try:
                await asyncio.wait_for(self._closed.wait(), timeout)
            except asyncio.TimeoutError:
                self._task.cancel()
                self._writer.close()

    async def __aenter__(self) -> "AsyncTerminalConnection":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
