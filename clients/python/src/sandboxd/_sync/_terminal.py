"""A terminal attached over a WebSocket, for the sync client: the asyncio connection of
``_async/_terminal.py`` run on an event loop of its own, in a thread of the connection, behind blocking calls.

Hand-written (not generated from ``_async/``). Why a loop in a thread: Debian 12's ``websockets`` (10.4) has no
sync client (``websockets.sync`` came in 11), and running the one asyncio implementation keeps one code path for
the protocol. Each call here hands a coroutine to that loop and waits for its result; ``on_data`` is called in
the connection's thread.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable, Coroutine, Optional, TypeVar, Union

from .._async._terminal import AsyncTerminalConnection, TerminalExit
from .._http import Settings

__all__ = ["TerminalConnection", "TerminalExit", "OnData"]

#: Called with each piece of output, from the connection's thread.
OnData = Callable[[bytes], None]

T = TypeVar("T")


class _LoopThread:
    """An event loop running in a daemon thread of its own, until ``stop()``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self.stopped = False
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def _main(self) -> None:
        try:
            self.loop.run_forever()
        finally:
            self.loop.close()

    @property
    def inside(self) -> bool:
        """True in the loop's own thread (an ``on_data`` callback), which must not wait for the loop."""
        return threading.current_thread() is self._thread

    def send(self, coroutine: Coroutine[Any, Any, None]) -> None:
        """Runs ``coroutine`` and waits for it; from the loop's thread (``on_data``), starts it without waiting."""
        if self.inside:
            self.loop.create_task(coroutine)
        else:
            self.run(coroutine)

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: Optional[float] = None) -> T:
        """Runs ``coroutine`` on the loop and waits for its result (its exception is raised here)."""
        if self.inside:
            coroutine.close()
            raise RuntimeError("an on_data callback cannot wait for its own connection (write() and close() can)")
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        if self.inside:
            self.loop.call_soon(self.loop.stop)  # from the loop itself: it ends after this callback
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


class TerminalConnection:
    """A live attachment to a terminal. Output: ``recv()``, ``read_until()``, iteration, or an ``on_data``
    callback (called from the connection's thread); input: ``write()``; ``resize()``; ``wait()`` for how the
    program ended. Closing it only detaches: the terminal keeps running until deleted or its program ends.
    """

    def __init__(self, inner: AsyncTerminalConnection, thread: _LoopThread) -> None:
        self._inner = inner
        self._thread = thread
        self.pty_id = inner.pty_id

    @classmethod
    def connect(
        cls, settings: Settings, path: str, pty_id: str, on_data: Optional[OnData] = None
    ) -> "TerminalConnection":
        """Opens the WebSocket at ``path`` (the terminal's ``…/connect``) with the client's credentials."""
        thread = _LoopThread(f"sandboxd-terminal-{pty_id}")
        try:
            inner = thread.run(AsyncTerminalConnection.connect(settings, path, pty_id, on_data))
        except BaseException:
            thread.stop()
            raise
        return cls(inner, thread)

    #: How the program ended, once the server said (None while it runs, or when the connection closed first).
    @property
    def exit(self) -> Optional[TerminalExit]:
        return self._inner.exit

    #: The WebSocket close code, once closed (1005 when the server sent none, 1006 when the connection broke).
    @property
    def close_code(self) -> Optional[int]:
        return self._inner.close_code

    #: The last ``{"type": "error"}`` message the server sent, if any.
    @property
    def last_error(self) -> Optional[str]:
        return self._inner.last_error

    @property
    def closed(self) -> bool:
        return self._inner.closed

    def recv(self, timeout: Optional[float] = None) -> Optional[bytes]:
        """The next piece of output (the scrollback first, then live), or None once the connection closed.

        Raises ``TimeoutError`` when ``timeout`` seconds pass with nothing new.
        """
        return self._thread.run(self._inner.recv(timeout))

    def read_until(self, marker: Union[str, bytes], timeout: float = 30.0) -> bytes:
        """Reads output until ``marker`` appears; answers everything up to and including it.

        Raises ``TimeoutError`` (with what was read) when it does not appear within ``timeout`` seconds, and
        ``EOFError`` when the connection closes first.
        """
        return self._thread.run(self._inner.read_until(marker, timeout))

    def __iter__(self) -> "TerminalConnection":
        return self

    def __next__(self) -> bytes:
        chunk = self.recv()
        if chunk is None:
            raise StopIteration
        return chunk

    def write(self, data: Union[str, bytes]) -> None:
        """Input, as if typed (a str is sent as UTF-8; "\\r" is Enter). From ``on_data``, it is sent after the
        callback returns."""
        self._thread.send(self._inner.write(data))

    def resize(self, cols: int, rows: int) -> None:
        """Resizes the terminal; its program gets SIGWINCH."""
        self._thread.send(self._inner.resize(cols, rows))

    def wait(self, timeout: Optional[float] = None) -> Optional[TerminalExit]:
        """Waits until the connection closes; answers how the program ended (None when it was only detached).

        Raises ``TimeoutError`` when it is still open after ``timeout`` seconds.
        """
        return self._thread.run(self._inner.wait(timeout))

    def close(self, timeout: float = 5.0) -> None:
        """Detaches: the closing handshake, then the connection (at most ``timeout`` seconds); the connection's
        thread ends with it."""
        if self._thread.stopped:
            return
        if self._thread.inside:  # from on_data: detach once the callback returned, then end the thread
            closing = self._thread.loop.create_task(self._inner.close(timeout))
            closing.add_done_callback(lambda _: self._thread.stop())
            return
        self._thread.run(self._inner.close(timeout))
        self._thread.stop()

    def __enter__(self) -> "TerminalConnection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
