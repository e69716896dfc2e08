"""What the asyncio client does where the sync client blocks (``_sync/_backend.py`` is its counterpart).

Hand-written, like that one; the rest of ``_async/`` is the source the sync client is generated from.

Requests run in a thread pool of the client's own (``max_concurrency`` threads at most, made as needed), not
in asyncio's default executor: that one has ``cpu_count + 4`` threads, too few for many runs at once. The
standard library has no asyncio HTTP client, and a second HTTP implementation over asyncio streams would
duplicate what ``http.client`` does (chunked bodies, TLS, header parsing); a thread per request under way is
the price, and the waits between retries and polls are ``asyncio.sleep``, which hold no thread.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Optional, TypeVar, Union

from .._http import Abort, Failure, Request, Settings, Success, attempt

T = TypeVar("T")

sleep = asyncio.sleep


def monotonic() -> float:
    return asyncio.get_running_loop().time()


class Pool:
    """The client's worker threads, made on first use; ``close()`` lets them end."""

    def __init__(self, max_workers: int) -> None:
        self._max_workers = max_workers
        self._executor: Optional[ThreadPoolExecutor] = None
        self._lock = threading.Lock()

    def executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self._max_workers, thread_name_prefix="sandboxd")
            return self._executor

    def close(self) -> None:
        with self._lock:
            if self._executor is not None:
                self._executor.shutdown(wait=False)
                self._executor = None


async def run_attempt(pool: Pool, settings: Settings, request: Request) -> Union[Success, Failure]:
    """One attempt in a worker thread. Cancelling the awaiting task ends the attempt too (its socket is shut)."""
    abort = Abort()
    future = asyncio.get_running_loop().run_in_executor(pool.executor(), attempt, settings, request, abort)
    try:
        return await future
    except asyncio.CancelledError:
        abort.trigger("cancelled")
        raise


async def run_blocking(pool: Pool, fn: Callable[..., T], *args: Any) -> T:
    """A blocking call (reading a local file) in a worker thread."""
    return await asyncio.get_running_loop().run_in_executor(pool.executor(), functools.partial(fn, *args))
