"""HTTP for both clients, without I/O: what a request is (``Request``, ``build_request``), what its attempt
sends (``url_for``, ``headers_for``, ``encoded_json``, ``timeouts_for``), what a failed attempt means
(``network_failure``) and whether it may be sent again (``retry_delay``).

The attempts themselves are made with httpx by the transports (``_async/transport.py`` and the sync one
generated from it), over one connection pool per client.

Retries (the TypeScript client's rules), up to ``max_retries`` times, ``retry_delay · 2^n`` apart (or as long
as ``Retry-After`` says, up to a minute):
- a connection that could not be made (refused, DNS, unreachable, connect time-out, a proxy that refused): any
  method;
- 429 RATE_LIMITED and CAPACITY_BUSY (the server refused before doing anything): any method;
- 502, 503, 504 and connections that broke after the request went out: only idempotent requests (GET, HEAD,
  PUT, DELETE, OPTIONS, or a call marked idempotent, like uploads and downloads). A POST /execute that may
  have run is never sent twice.
Never retried: time-outs of the client (the caller's budget is spent), TLS failures, 429 QUOTA_EXCEEDED, other
4xx, 500.

Time limits of an attempt (``timeout`` seconds, 0 for none): the connection within ``min(timeout, 10)`` s, no
wait on the server longer than ``timeout``, and the whole answer within ``timeout`` (checked between chunks).
A streamed answer (events, process output, a watch) has the limit until its head arrives, none after.
"""

from __future__ import annotations

import json as jsonlib
import re
import ssl
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, Mapping, Optional
from urllib.parse import quote, urlencode

import httpx

from ._version import VERSION
from ._answers import CHUNK_BYTES, Failure
from ._model import to_json
from .errors import NetworkError

#: The longest ``Retry-After`` the client waits on its own; a longer one is the caller's decision.
MAX_RETRY_AFTER_SECONDS = 60.0
#: Seconds a connection may take to be made (undici's default), within the attempt's own limit.
CONNECT_TIMEOUT_SECONDS = 10.0
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


MISSING: Any = object()


def defined(**values: Any) -> Dict[str, Any]:
    """The values that were given (absent options are left to the server's defaults)."""
    return {key: value for key, value in values.items() if value is not None}


@dataclass(frozen=True)
class Settings:
    """What every request of a client shares. Times are seconds."""

    base_url: str
    api_key: Optional[str]
    access_token: Optional[str]
    timeout: float
    max_retries: int
    retry_delay: float
    headers: Mapping[str, str] = field(default_factory=dict)
    #: TLS verification of the client's connections (its ``verify``), shared by HTTP and the terminals' WebSockets.
    ssl_context: Optional[ssl.SSLContext] = None


@dataclass
class Body:
    """A request body that can be produced again for each attempt (uploads stream files from disk)."""

    content_type: str
    length: int
    chunks: Callable[[], Iterable[bytes]]


@dataclass
class Request:
    method: str
    path: str
    #: The path as written in the OpenAPI document (``/v1/vms/{vm_id}``): names the answer's model.
    template: str = ""
    query: Optional[Mapping[str, Any]] = None
    json: Any = MISSING
    body: Optional[Body] = None
    headers: Mapping[str, str] = field(default_factory=dict)
    #: Decides the error class where the status alone does not (errors.OPERATION_KINDS).
    kind: Optional[str] = None
    idempotent: bool = False
    #: Seconds for each attempt of this request, instead of the client's ``timeout``.
    timeout: Optional[float] = None
    #: Leave out the credentials (the login flow's unauthenticated calls).
    anonymous: bool = False
    #: "json", "bytes", "text", "none" or "stream".
    response_type: str = "json"
    #: Where "bytes" answers go, chunk by chunk, instead of into memory (a download to a file).
    sink: Optional[Any] = None

    @property
    def operation(self) -> str:
        return f"{self.method} {self.path}"

    @property
    def operation_key(self) -> str:
        """``METHOD /template``, the key of ``models.OPERATIONS``."""
        return f"{self.method} {self.template or self.path}"


# -- building requests ------------------------------------------------------------------------------------


def fill_path(template: str, params: Optional[Mapping[str, Any]]) -> str:
    """``/v1/vms/{vm_id}`` with ``{"vm_id": "vm-1"}`` → ``/v1/vms/vm-1`` (each value percent-encoded)."""

    def value(match: "re.Match[str]") -> str:
        name = match.group(1)
        if params is None or params.get(name) is None:
            raise TypeError(f"missing path parameter {name} for {template}")
        return quote(str(params[name]), safe="")

    return re.sub(r"\{(\w+)\}", value, template)


def _query_value(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return str(value)


def url_for(settings: Settings, request: Request) -> str:
    query = {k: _query_value(v) for k, v in (request.query or {}).items() if v is not None}
    return settings.base_url + request.path + (f"?{urlencode(query)}" if query else "")


def headers_for(settings: Settings, request: Request) -> Dict[str, str]:
    headers: Dict[str, str] = {"accept": "application/json", "user-agent": f"sandboxd-python/{VERSION}"}
    headers.update({k.lower(): v for k, v in settings.headers.items()})
    if not request.anonymous:
        # The key travels in a header only: never in a URL, where logs and proxies would keep it.
        if settings.api_key:
            headers["x-api-key"] = settings.api_key
        elif settings.access_token:
            headers["authorization"] = f"Bearer {settings.access_token}"
    headers.update({k.lower(): v for k, v in request.headers.items()})
    return headers


# -- one attempt ------------------------------------------------------------------------------------------


def encoded_json(value: Any) -> bytes:
    """A JSON request body (models in it are sent as the JSON they came as)."""
    return jsonlib.dumps(to_json(value), separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def request_headers(settings: Settings, request: Request) -> Dict[str, str]:
    """Every header of an attempt, the body's type and length included."""
    headers = headers_for(settings, request)
    if request.body is not None:
        headers["content-type"] = request.body.content_type
        headers["content-length"] = str(request.body.length)
    elif request.json is not MISSING:
        headers["content-type"] = "application/json"
    return headers


def attempt_timeout(settings: Settings, request: Request) -> float:
    """Seconds the attempt may take (0: no limit)."""
    return request.timeout if request.timeout is not None else settings.timeout


def timeouts_for(timeout: float) -> httpx.Timeout:
    """httpx's limits for an attempt of ``timeout`` seconds: each wait on the network at most that long, the
    connection at most ``CONNECT_TIMEOUT_SECONDS``."""
    if timeout <= 0:
        return httpx.Timeout(None, connect=CONNECT_TIMEOUT_SECONDS)
    return httpx.Timeout(timeout, connect=min(timeout, CONNECT_TIMEOUT_SECONDS))


def stop_read_timeout(response: httpx.Response) -> None:
    """Lifts the read time limit of a streamed answer whose head arrived (events may be minutes apart).

    httpcore reads the limit from the request's ``timeout`` extension when the body's first read starts, and
    httpx hands it the same dict: changing it between the head and the body is the one way httpx (0.23 to 0.28)
    leaves to have a limit on the head only. Where it would not take, a quiet stream ends at the limit instead.
    """
    timeouts = response.request.extensions.get("timeout")
    if isinstance(timeouts, dict):
        timeouts["read"] = None


def _cause(error: BaseException) -> BaseException:
    """The innermost error under httpx's (an OSError says more than httpx's wrapper)."""
    seen = error
    while seen.__cause__ is not None or seen.__context__ is not None:
        seen = seen.__cause__ or seen.__context__  # type: ignore[assignment]
        if isinstance(seen, OSError):
            return seen
    return error


def _describe(error: BaseException) -> str:
    inner = _cause(error)
    if isinstance(inner, OSError) and inner.errno is not None and inner.strerror:
        return f"{inner.strerror} (errno {inner.errno})"
    return str(error) or str(inner) or type(error).__name__


def _is_tls(error: BaseException) -> bool:
    seen: Optional[BaseException] = error
    while seen is not None:
        if isinstance(seen, ssl.SSLError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def timed_out(operation: str, timeout: float, answering: bool) -> Failure:
    """The failure of an attempt that ran out of time (never retried: the request may have arrived)."""
    message = f"{operation}: no {'complete ' if answering else ''}answer within {timeout:g} s"
    return Failure(NetworkError(message, operation=operation, timed_out=True), "never")


def network_failure(error: Exception, settings: Settings, request: Request, answering: bool) -> Failure:
    """What an httpx error during an attempt means: the error to raise, and whether the request may be sent
    again. ``answering``: the error came while reading the answer (the request arrived)."""
    operation = request.operation
    if isinstance(error, httpx.ConnectTimeout) or (
        isinstance(error, (httpx.ConnectError, httpx.ProxyError)) and not _is_tls(error)
    ):
        # Nothing reached the server: any request may be sent again.
        where = "through the proxy " if isinstance(error, httpx.ProxyError) else ""
        network = NetworkError(
            f"{operation}: cannot reach {settings.base_url} {where}({_describe(error)})", operation=operation
        )
        network.__cause__ = error
        return Failure(network, "always")
    if isinstance(error, httpx.TimeoutException):
        return timed_out(operation, attempt_timeout(settings, request), answering)
    if isinstance(error, httpx.ConnectError):
        # A certificate that does not verify will not verify on the next try either.
        network = NetworkError(
            f"{operation}: TLS with {settings.base_url} failed ({_describe(error)})", operation=operation
        )
        network.__cause__ = error
        return Failure(network, "never")
    if isinstance(error, (httpx.NetworkError, httpx.RemoteProtocolError, httpx.DecodingError)):
        network = NetworkError(
            f"{operation}: the connection to {settings.base_url} broke off ({_describe(error)})", operation=operation
        )
        network.__cause__ = error
        return Failure(network, "idempotent")
    network = NetworkError(f"{operation}: {_describe(error)}", operation=operation)
    network.__cause__ = error
    return Failure(network, "never")


def retry_delay(failure: Failure, request: Request, attempt_number: int, settings: Settings) -> Optional[float]:
    """Seconds to wait before sending ``request`` again after ``failure``, or None when it must not be retried."""
    if attempt_number >= settings.max_retries:
        return None
    if failure.retryable == "never" or (failure.retryable == "idempotent" and not request.idempotent):
        return None
    delay = failure.retry_after if failure.retry_after is not None else settings.retry_delay * (2**attempt_number)
    return None if delay > MAX_RETRY_AFTER_SECONDS else delay


def build_request(
    method: str,
    path_template: str,
    *,
    params: Optional[Mapping[str, Any]] = None,
    query: Optional[Mapping[str, Any]] = None,
    json: Any = MISSING,
    body: Optional[Body] = None,
    headers: Optional[Mapping[str, str]] = None,
    kind: Optional[str] = None,
    idempotent: Optional[bool] = None,
    timeout: Optional[float] = None,
    anonymous: bool = False,
    response_type: str = "json",
    sink: Optional[Any] = None,
) -> Request:
    method = method.upper()
    return Request(
        method=method,
        path=fill_path(path_template, params),
        template=path_template,
        query=query,
        json=json,
        body=body,
        headers=dict(headers or {}),
        kind=kind,
        idempotent=method in IDEMPOTENT_METHODS if idempotent is None else idempotent,
        timeout=timeout,
        anonymous=anonymous,
        response_type="none" if method == "HEAD" and response_type == "json" else response_type,
        sink=sink,
    )


def iter_file(path_or_file: Any, start: int) -> Iterator[bytes]:
    """The bytes of a file from ``start``, in chunks (reopened by path, or a seekable file object rewound)."""
    if hasattr(path_or_file, "read"):
        path_or_file.seek(start)
        while True:
            chunk = path_or_file.read(CHUNK_BYTES)
            if not chunk:
                return
            yield chunk
    with open(path_or_file, "rb") as handle:
        while True:
            chunk = handle.read(CHUNK_BYTES)
            if not chunk:
                return
            yield chunk
