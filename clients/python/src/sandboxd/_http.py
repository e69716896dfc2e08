"""HTTP for both clients: one attempt of a request (``attempt``), and what may be retried (``retry_delay``).

Only the standard library: ``http.client`` over a new connection per attempt (no pool: the async client runs
attempts in worker threads, and a connection per attempt keeps them independent). Both clients share this
core: the sync client calls ``attempt`` directly; the async client runs it in a thread, so the retry loop,
the back-off and the polling of the async client are real ``asyncio`` waits that hold no thread.

Retries (the TypeScript client's rules), up to ``max_retries`` times, ``retry_delay · 2^n`` apart (or as long
as ``Retry-After`` says, up to a minute):
- a connection that could not be made (refused, DNS, unreachable, connect time-out): any method;
- 429 RATE_LIMITED and CAPACITY_BUSY (the server refused before doing anything): any method;
- 502, 503, 504 and connections that broke after the request went out: only idempotent requests (GET, HEAD,
  PUT, DELETE, OPTIONS, or a call marked idempotent, like uploads and downloads). A POST /execute that may
  have run is never sent twice.
Never retried: time-outs of the client (the caller's budget is spent), 429 QUOTA_EXCEEDED, other 4xx, 500.
"""

from __future__ import annotations

import http.client
import json as jsonlib
import re
import socket
import ssl
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, Mapping, Optional, Tuple, Union
from urllib.parse import quote, urlencode, urlsplit

from ._version import VERSION
from ._answers import CHUNK_BYTES, Failure, Retryable, Success, failure_of, read_success
from .errors import NetworkError, SandboxdError

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


class Abort:
    """Ends an attempt from another thread: the client's time limit, or an asyncio task that was cancelled.

    Shutting the socket down makes the blocked ``recv``/``send`` of the attempt's thread return at once.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connection: Optional[http.client.HTTPConnection] = None
        self.reason: Optional[str] = None

    def watch(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            self._connection = connection
            if self.reason is not None:
                _shutdown(connection)

    def trigger(self, reason: str) -> None:
        with self._lock:
            if self.reason is None:
                self.reason = reason
            if self._connection is not None:
                _shutdown(self._connection)


def _shutdown(connection: http.client.HTTPConnection) -> None:
    sock = connection.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class StreamedResponse:
    """A 2xx answer whose body the caller reads (the event stream). ``close()`` may be called from any thread."""

    def __init__(self, connection: http.client.HTTPConnection, response: http.client.HTTPResponse, abort: Abort):
        self.connection = connection
        self.response = response
        self.status = response.status
        self.headers = response.headers
        self._abort = abort

    def readline(self) -> bytes:
        return self.response.readline()

    def close(self) -> None:
        self._abort.trigger("closed")
        self.connection.close()


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


def _connection(settings: Settings, timeout: float) -> http.client.HTTPConnection:
    parts = urlsplit(settings.base_url)
    connect_timeout = min(timeout, CONNECT_TIMEOUT_SECONDS) if timeout > 0 else CONNECT_TIMEOUT_SECONDS
    if parts.scheme == "https":
        return http.client.HTTPSConnection(
            parts.hostname or "", parts.port, timeout=connect_timeout, context=ssl.create_default_context()
        )
    return http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=connect_timeout)


def _target(settings: Settings, url: str) -> str:
    """The request target: the URL without scheme and host (the base URL may have a path prefix)."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def _describe(error: BaseException) -> str:
    if isinstance(error, socket.gaierror):
        return f"name resolution failed: {error}"
    if isinstance(error, OSError) and error.errno is not None and error.strerror:
        return f"{error.strerror} (errno {error.errno})"
    return str(error) or type(error).__name__


def attempt(settings: Settings, request: Request, abort: Optional[Abort] = None) -> Union[Success, Failure]:
    """Sends the request once; answers its value, or the error with whether it may be retried."""
    abort = abort or Abort()
    timeout = request.timeout if request.timeout is not None else settings.timeout
    operation = request.operation
    url = url_for(settings, request)
    headers = headers_for(settings, request)
    payload: Optional[Union[bytes, Iterable[bytes]]] = None
    if request.body is not None:
        headers["content-type"] = request.body.content_type
        headers["content-length"] = str(request.body.length)
        payload = request.body.chunks()
    elif request.json is not MISSING:
        payload = jsonlib.dumps(request.json, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        headers["content-type"] = "application/json"
        headers["content-length"] = str(len(payload))
    elif request.method in ("POST", "PUT", "PATCH"):
        headers["content-length"] = "0"

    connection = _connection(settings, timeout)
    # The whole attempt (connect, send, answer) has `timeout` seconds, like the TypeScript client's abort timer.
    timer = threading.Timer(timeout, abort.trigger, args=("timeout",)) if timeout > 0 else None
    if timer is not None:
        timer.daemon = True
        timer.start()
    keep_open = False

    def ended(error: BaseException, retryable: Retryable, what: str) -> Failure:
        # Once connected, the socket's own time limit is the attempt's: its time-out may come before the timer's
        # thread has run, and is the same time-out (never retried: the request may have arrived).
        if abort.reason == "timeout" or (what != "connect" and isinstance(error, socket.timeout)):
            message = f"{operation}: no {'complete ' if what == 'answer' else ''}answer within {timeout:g} s"
            return Failure(NetworkError(message, operation=operation, timed_out=True), "never")
        if abort.reason is not None:
            return Failure(NetworkError(f"{operation}: {abort.reason}", operation=operation), "never")
        if what == "connect":
            message = f"{operation}: cannot reach {settings.base_url} ({_describe(error)})"
        else:
            message = f"{operation}: the connection to {settings.base_url} broke off ({_describe(error)})"
        network = NetworkError(message, operation=operation)
        network.__cause__ = error
        return Failure(network, retryable)

    try:
        try:
            connection.connect()
            abort.watch(connection)
        except ssl.SSLError as error:
            # A certificate that does not verify will not verify on the next try either.
            return ended(error, "never", "connect")
        except (OSError, http.client.HTTPException) as error:
            return ended(error, "always", "connect")
        if connection.sock is not None:
            connection.sock.settimeout(timeout if timeout > 0 else None)
        try:
            connection.request(request.method, _target(settings, url), body=payload, headers=headers)
            response = connection.getresponse()
        except (OSError, http.client.HTTPException) as error:
            return ended(error, "idempotent", "send")
        try:
            if 200 <= response.status < 300:
                if request.response_type == "stream":
                    if timer is not None:
                        timer.cancel()
                    if connection.sock is not None:
                        connection.sock.settimeout(None)
                    keep_open = True
                    return Success(StreamedResponse(connection, response, abort))
                return Success(read_success(response, request, operation))
            return failure_of(response, request, operation)
        except SandboxdError:
            raise
        except (OSError, http.client.HTTPException, ValueError) as error:
            return ended(error, "idempotent", "answer")
    finally:
        if timer is not None and not keep_open:
            timer.cancel()
        if not keep_open:
            connection.close()


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


def split_base_url(base_url: str) -> Tuple[str, str, int, str]:
    """(scheme, host, port, path prefix) of the base URL."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, parts.hostname or "", port, parts.path.rstrip("/")
