"""A terminal attached over a WebSocket, for the sync client: a standard-library RFC 6455 client (see
``_websocket.py``) over a ``socket``, with a reader thread that answers pings and hands output over.

Hand-written (not generated from ``_async/``): blocking sockets and threads here, asyncio streams there.
"""

from __future__ import annotations

import queue
import socket
import ssl
import threading
import time
from typing import Callable, Optional, Union

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

__all__ = ["TerminalConnection", "TerminalExit", "OnData"]

_END = object()
#: Called with each piece of output, from the connection's reader thread.
OnData = Callable[[bytes], None]


class TerminalConnection:
    """A live attachment to a terminal. Output: ``recv()``, ``read_until()``, iteration, or an ``on_data``
    callback (called from the reader thread); input: ``write()``; ``resize()``; ``wait()`` for how the program
    ended. Closing it only detaches: the terminal keeps running until deleted or its program ends.
    """

    def __init__(self, sock: socket.socket, leftover: bytes, pty_id: str, on_data: Optional[OnData]):
        self.pty_id = pty_id
        #: How the program ended, once the server said (None while it runs, or when the connection closed first).
        self.exit: Optional[TerminalExit] = None
        #: The WebSocket close code, once closed (1005 when the server sent none, 1006 when the connection broke).
        self.close_code: Optional[int] = None
        #: The last ``{"type": "error"}`` message the server sent, if any.
        self.last_error: Optional[str] = None
        self._sock = sock
        self._on_data = on_data
        self._send_lock = threading.Lock()
        self._chunks: "queue.Queue[object]" = queue.Queue()
        self._pending = b""
        self._ended = False
        self._closed = threading.Event()
        self._close_sent = False
        self._parser = FrameParser()
        self._reader = threading.Thread(
            target=self._read, args=(leftover,), name=f"sandboxd-terminal-{pty_id}", daemon=True
        )
        self._reader.start()

    @classmethod
    def connect(
        cls, settings: Settings, path: str, pty_id: str, on_data: Optional[OnData] = None
    ) -> "TerminalConnection":
        """Opens the WebSocket at ``path`` (the terminal's ``…/connect``) with the client's credentials."""
        target = WebSocketTarget(settings, path, f"attach terminal {pty_id}")
        timeout = min(settings.timeout, CONNECT_TIMEOUT_SECONDS) if settings.timeout > 0 else CONNECT_TIMEOUT_SECONDS
        try:
            sock = socket.create_connection((target.host, target.port), timeout=timeout)
        except OSError as error:
            raise NetworkError(f"{target.operation}: cannot reach {settings.base_url} ({error})") from error
        try:
            if target.tls:
                sock = ssl.create_default_context().wrap_socket(sock, server_hostname=target.host)
            sock.settimeout(settings.timeout if settings.timeout > 0 else None)
            sock.sendall(target.request)
            buffer = b""
            while b"\r\n\r\n" not in buffer:
                data = sock.recv(4096)
                if not data:
                    raise NetworkError(f"{target.operation}: the server closed the connection during the handshake")
                buffer += data
                if len(buffer) > MAX_HANDSHAKE_BYTES:
                    raise NetworkError(f"{target.operation}: the handshake answer is too long")
            head, rest = buffer.split(b"\r\n\r\n", 1)
            status, reason, headers = parse_handshake(head)
            if status != 101:
                length = int(headers.get("content-length", "0") or 0)
                while len(rest) < min(length, MAX_HANDSHAKE_BYTES):
                    data = sock.recv(4096)
                    if not data:
                        break
                    rest += data
                raise handshake_error(target, status, reason, headers, rest[:length])
            check_accept(target, headers)
            sock.settimeout(None)
        except BaseException as error:
            sock.close()
            if isinstance(error, (OSError, ssl.SSLError)) and not isinstance(error, SandboxdError):
                raise NetworkError(f"{target.operation}: the WebSocket handshake failed ({error})") from error
            raise
        return cls(sock, rest, pty_id, on_data)

    # -- reading -------------------------------------------------------------------------------------------

    def _read(self, leftover: bytes) -> None:
        code = 1006
        try:
            data = leftover
            while True:
                for message in self._parser.feed(data):
                    if message.kind == "binary":
                        self._deliver(message.data)
                    elif message.kind == "text":
                        control = parse_control(message.data) or {}
                        if control.get("type") == "exit":
                            self.exit = TerminalExit(control.get("exit_code"), control.get("signal"))
                        elif control.get("type") == "error":
                            self.last_error = str(control.get("message"))
                    elif message.kind == "ping":
                        self._send(OP_PONG, message.data)
                    elif message.kind == "close":
                        code = message.close_code if message.close_code is not None else 1005
                        self._send_close(code if message.close_code is not None else 1000)
                        return
                data = self._sock.recv(65536)
                if not data:
                    return
        except (OSError, SandboxdError):
            return
        finally:
            self.close_code = code
            self._ended = True
            self._chunks.put(_END)
            self._closed.set()
            try:
                self._sock.close()
            except OSError:
                pass

    def _deliver(self, chunk: bytes) -> None:
        if self._on_data is not None:
            self._on_data(chunk)
        else:
            self._chunks.put(chunk)

    def recv(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next piece of output (the scrollback first, then live), or None once the connection closed.

        Raises ``TimeoutError`` when ``timeout`` seconds pass with nothing new.
        """
        if self._on_data is not None:
            raise SandboxdError("this connection hands its output to on_data: recv() has nothing to read")
        if self._pending:
            chunk, self._pending = self._pending, b""
            return chunk
        try:
            item = self._chunks.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no output from terminal {self.pty_id} within {timeout} s") from None
        if item is _END:
            self._chunks.put(_END)  # later calls see the end too
            return None
        assert isinstance(item, bytes)
        return item

    def read_until(self, marker: Union[str, bytes], timeout: float = 30.0) -> bytes:
        """Reads output until ``marker`` appears; answers everything up to and including it.

        Raises ``TimeoutError`` (with what was read) when it does not appear within ``timeout`` seconds, and
        ``EOFError`` when the connection closes first.
        """
        wanted = marker.encode("utf-8") if isinstance(marker, str) else marker
        deadline = time.monotonic() + timeout
        seen = b""
        while True:
            found = seen.find(wanted)
            if found >= 0:
                end = found + len(wanted)
                self._pending = seen[end:] + self._pending
                return seen[:end]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._pending = seen + self._pending
                raise TimeoutError(
                    f"no {marker!r} from terminal {self.pty_id} within {timeout} s; read: {seen[-500:]!r}"
                )
            try:
                chunk = self.recv(timeout=remaining)
            except TimeoutError:
                continue
            if chunk is None:
                raise EOFError(f"terminal {self.pty_id} closed before {marker!r}; read: {seen[-500:]!r}")
            seen += chunk

    def __iter__(self) -> "TerminalConnection":
        return self

    def __next__(self) -> bytes:
        chunk = self.recv()
        if chunk is None:
            raise StopIteration
        return chunk

    # -- writing -------------------------------------------------------------------------------------------

    def _send(self, opcode: int, payload: bytes) -> None:
        with self._send_lock:
            self._sock.sendall(encode_frame(opcode, payload))

    def _send_close(self, code: int) -> None:
        with self._send_lock:
            if self._close_sent:
                return
            self._close_sent = True
            try:
                self._sock.sendall(encode_frame(OP_CLOSE, close_payload(code)))
            except OSError:
                pass

    def _check_open(self) -> None:
        if self._ended or self._close_sent:
            raise SandboxdError(f"the connection to terminal {self.pty_id} is closed")

    def write(self, data: Union[str, bytes]) -> None:
        """Input, as if typed (a str is sent as UTF-8; "\\r" is Enter)."""
        self._check_open()
        try:
            self._send(OP_BINARY, data.encode("utf-8") if isinstance(data, str) else bytes(data))
        except OSError as error:
            raise NetworkError(f"could not write to terminal {self.pty_id}: {error}") from error

    def resize(self, cols: int, rows: int) -> None:
        """Resizes the terminal; its program gets SIGWINCH."""
        self._check_open()
        with self._send_lock:
            try:
                self._sock.sendall(resize_message(cols, rows))
            except OSError as error:
                raise NetworkError(f"could not resize terminal {self.pty_id}: {error}") from error

    # -- the end -------------------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def wait(self, timeout: Optional[float] = None) -> Optional[TerminalExit]:
        """Waits until the connection closes; answers how the program ended (None when it was only detached).

        Raises ``TimeoutError`` when it is still open after ``timeout`` seconds.
        """
        if not self._closed.wait(timeout):
            raise TimeoutError(f"terminal {self.pty_id} is still running after {timeout} s")
        return self.exit

    def close(self, timeout: float = 5.0) -> None:
        """Detaches: the closing handshake, then the socket (at most ``timeout`` seconds)."""
        if not self._closed.is_set():
            self._send_close(1000)
            if not self._closed.wait(timeout):
                try:
                    self._sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                self._closed.wait(timeout)

    def __enter__(self) -> "TerminalConnection":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
