"""What the sync client does where the asyncio client awaits (the counterpart of ``_async/_backend.py``).

Hand-written: the rest of ``_sync/`` is generated from ``_async/`` by ``scripts/unasync.py``.
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Iterable, Optional

import httpx

from .._connection import make_client
from .._http import Body, Settings

sleep = time.sleep
monotonic = time.monotonic


def content_of(body: Body) -> Iterable[bytes]:
    """An upload's chunks for httpx's ``Client``."""
    return body.chunks()


class HttpClient:
    """The client's connection pool: one ``httpx.Client``, made on first use. One given by the caller
    (``http_client``) is used as it is, and left open on ``close()``: its owner closes it."""

    def __init__(
        self,
        settings: Settings,
        proxy: Optional[str],
        max_connections: Optional[int],
        given: Optional[httpx.Client] = None,
    ) -> None:
        self._settings = settings
        self._proxy = proxy
        self._max_connections = max_connections
        self._given = given
        self._client: Optional[httpx.Client] = None
        # A sync client may be shared by threads: one pool for all of them.
        self._lock = threading.Lock()

    def get(self) -> httpx.Client:
        if self._given is not None:
            return self._given
        with self._lock:
            if self._client is None:
                assert self._settings.ssl_context is not None
                self._client = make_client(
                    context=self._settings.ssl_context, proxy=self._proxy, max_connections=self._max_connections
                )
                # A client dropped without close() still gives its connections back.
                weakref.finalize(self, self._client.close)
            return self._client

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()
