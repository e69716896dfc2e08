"""What the asyncio client does where the sync client blocks (``_sync/_backend.py`` is its counterpart).

Hand-written, like that one; the rest of ``_async/`` is the source the sync client is generated from. Requests
are real asyncio (httpx's ``AsyncClient``): no thread per request; the waits between retries and polls are
``asyncio.sleep``.
"""

from __future__ import annotations

import asyncio
from typing import AsyncIterator, Iterable, Optional

import httpx

from .._connection import make_async_client
from .._http import Body, Settings

sleep = asyncio.sleep


def monotonic() -> float:
    return asyncio.get_running_loop().time()


async def content_of(body: Body) -> AsyncIterator[bytes]:
    """An upload's chunks for httpx's ``AsyncClient`` (which takes async iterables only).

    Local files are read on the event loop, 64 KiB at a time, as httpx reads the files it uploads itself.
    """
    chunks: Iterable[bytes] = body.chunks()
    for chunk in chunks:
        yield chunk


class HttpClient:
    """The client's connection pool: one ``httpx.AsyncClient``, made on first use in the running event loop.

    An ``AsyncClient``'s connections belong to the loop that opened them, so a client used from a second loop
    (a second ``asyncio.run``) gets a fresh pool there, and the first loop's is let go (its connections cannot be
    closed from another loop); one given by the caller (``http_client``) is used as it is, and left open on
    ``aclose()``: its owner closes it.
    """

    def __init__(
        self,
        settings: Settings,
        proxy: Optional[str],
        max_connections: Optional[int],
        given: Optional[httpx.AsyncClient] = None,
    ) -> None:
        self._settings = settings
        self._proxy = proxy
        self._max_connections = max_connections
        self._given = given
        self._client: Optional[httpx.AsyncClient] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None

    def get(self) -> httpx.AsyncClient:
        if self._given is not None:
            return self._given
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            assert self._settings.ssl_context is not None
            self._client = make_async_client(
                context=self._settings.ssl_context, proxy=self._proxy, max_connections=self._max_connections
            )
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, loop = self._client, self._loop
        self._client = self._loop = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.aclose()
        # A pool of another loop (ended, or running elsewhere) cannot be closed from this one: it is let go.
