"""How a client reaches the server: TLS verification (``verify``), a proxy (``proxy``, or the environment's
``HTTPS_PROXY``/``HTTP_PROXY``/``NO_PROXY``), and the httpx client built from them (the connection pool).

One TLS context serves the HTTP requests (httpx) and the terminals' WebSockets (``websockets``), so both trust
the same certificates.
"""

from __future__ import annotations

import inspect
import os
import ssl
from typing import Any, Dict, Optional, Union

import httpx

#: What ``verify`` takes: True (the default CA bundle; ``SSL_CERT_FILE``/``SSL_CERT_DIR`` are honoured), False
#: (no verification: for a test server only), the path of a CA bundle file or folder, or an ``ssl.SSLContext``.
VerifyTypes = Union[bool, str, "os.PathLike[str]", ssl.SSLContext]

#: Idle keep-alive connections are closed after this many seconds (httpx's default is 5).
KEEPALIVE_EXPIRY_SECONDS = 30.0


def ssl_context_for(verify: VerifyTypes) -> ssl.SSLContext:
    """The TLS context of ``verify``."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if isinstance(verify, bool):
        # httpx's own default: its CA bundle, or SSL_CERT_FILE / SSL_CERT_DIR when set (trust_env).
        return httpx.create_ssl_context(verify=verify, trust_env=True)
    if isinstance(verify, (str, os.PathLike)):
        path = os.fspath(verify)
        # Made here rather than passed to httpx as a path: httpx 0.28 deprecates verify=<str>.
        if os.path.isdir(path):
            return ssl.create_default_context(capath=path)
        return ssl.create_default_context(cafile=path)
    raise TypeError(f"verify must be a bool, a CA bundle path or an ssl.SSLContext, got {type(verify).__name__}")


def _takes_proxy() -> bool:
    return "proxy" in inspect.signature(httpx.Client.__init__).parameters


def client_options(
    *, context: ssl.SSLContext, proxy: Optional[str], max_connections: Optional[int] = None
) -> Dict[str, Any]:
    """The keyword arguments of ``httpx.Client`` / ``httpx.AsyncClient`` for a sandboxd client."""
    options: Dict[str, Any] = {
        "verify": context,
        # HTTP(S)_PROXY, ALL_PROXY and NO_PROXY from the environment when no proxy is given, as curl does.
        "trust_env": True,
        # Time limits are set on each request (the client's ``timeout``, or the call's own).
        "timeout": None,
        # The API answers where it is asked; a redirect would be a misconfigured base URL.
        "follow_redirects": False,
        "limits": httpx.Limits(
            max_connections=max_connections,
            max_keepalive_connections=min(20, max_connections) if max_connections else 20,
            keepalive_expiry=KEEPALIVE_EXPIRY_SECONDS,
        ),
    }
    if proxy is not None:
        # httpx 0.26 added `proxy=` and 0.28 removed `proxies=`; Debian 12 has 0.23, which has only `proxies=`.
        options["proxy" if _takes_proxy() else "proxies"] = proxy
    return options


def make_client(
    *, context: ssl.SSLContext, proxy: Optional[str], max_connections: Optional[int] = None
) -> httpx.Client:
    """A pool of connections for the sync client."""
    return httpx.Client(**client_options(context=context, proxy=proxy, max_connections=max_connections))


def make_async_client(
    *, context: ssl.SSLContext, proxy: Optional[str], max_connections: Optional[int] = None
) -> httpx.AsyncClient:
    """A pool of connections for the asyncio client (bound to the event loop that first uses it)."""
    return httpx.AsyncClient(**client_options(context=context, proxy=proxy, max_connections=max_connections))
