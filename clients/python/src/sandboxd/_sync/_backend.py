"""What the sync client does where the asyncio client awaits (the counterpart of ``_async/_backend.py``).

Hand-written: the rest of ``_sync/`` is generated from ``_async/`` by ``scripts/unasync.py``.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Optional, TypeVar, Union

from .._http import Failure, Request, Settings, Success, attempt

T = TypeVar("T")

sleep = time.sleep
monotonic = time.monotonic


class Pool:
    """The sync client sends from the caller's thread: no pool."""

    def __init__(self, max_workers: Optional[int] = None) -> None:
        pass

    def close(self) -> None:
        pass


def run_attempt(pool: Pool, settings: Settings, request: Request) -> Union[Success, Failure]:
    return attempt(settings, request)


def run_blocking(pool: Pool, fn: Callable[..., T], *args: Any) -> T:
    return fn(*args)
