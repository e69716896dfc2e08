# Generated from sandboxd/_async/transport.py by scripts/unasync.py: do not edit.
"""The request loop of the client: one attempt at a time over the client's connection pool (httpx), retried as
``_http.retry_delay`` allows, waiting between attempts without holding a thread."""

from __future__ import annotations

from typing import Any, Mapping, Optional, Union

import httpx

from .._answers import Failure, Success, failure_of, read_success, streams_to_sink
from .._http import (
    MISSING,
    Body,
    Request,
    Settings,
    attempt_timeout,
    build_request,
    encoded_json,
    network_failure,
    request_headers,
    retry_delay,
    stop_read_timeout,
    timed_out,
    timeouts_for,
    url_for,
)
from ._backend import HttpClient, content_of, monotonic, sleep


class StreamedResponse:
    """A 2xx answer whose body the caller reads as it comes (events, process output, a watch)."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status = response.status_code
        self.headers = response.headers

    def close(self) -> None:
        self.response.close()


class Transport:
    """The HTTP layer, for operations the client has no method for:
    ``client.transport.request("GET", "/healthz", anonymous=True)``.

    ``http`` holds the connection pool (``http.get()`` is the ``httpx.Client``)."""

    def __init__(
        self,
        settings: Settings,
        max_concurrency: Optional[int] = None,
        *,
        proxy: Optional[str] = None,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        self.settings = settings
        self.http = HttpClient(settings, proxy, max_concurrency, http_client)

    def request(
        self,
        method: str,
        path: str,
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
        sink: Any = None,
    ) -> Any:
        """Sends a request with retries; answers the body as asked (``response_type``: "json", "bytes", "text",
        "none" or "stream"). A JSON answer comes as its operation's model (``sandboxd.models``).

        ``path`` may be a template (``/v1/vms/{vm_id}``) filled from ``params``; ``query`` values that are None
        are left out; ``kind`` picks the error class where the status alone does not; ``idempotent`` (default:
        GET, HEAD, PUT, DELETE, OPTIONS) allows retrying after the request may have arrived; ``timeout`` is
        seconds per attempt instead of the client's.
        """
        request = build_request(
            method,
            path,
            params=params,
            query=query,
            json=json,
            body=body,
            headers=headers,
            kind=kind,
            idempotent=idempotent,
            timeout=timeout,
            anonymous=anonymous,
            response_type=response_type,
            sink=sink,
        )
        number = 0
        while True:
            outcome = self.attempt(request)
            if isinstance(outcome, Success):
                return outcome.value
            delay = retry_delay(outcome, request, number, self.settings)
            if delay is None:
                raise outcome.error
            sleep(delay)
            number += 1

    def attempt(self, request: Request) -> Union[Success, Failure]:
        """Sends the request once; answers its value, or the error with whether it may be retried."""
        settings = self.settings
        timeout = attempt_timeout(settings, request)
        deadline = monotonic() + timeout if timeout > 0 else None
        http = self.http.get()
        content: Any = None
        if request.body is not None:
            content = content_of(request.body)
        elif request.json is not MISSING:
            content = encoded_json(request.json)
        outgoing = http.build_request(
            request.method,
            url_for(settings, request),
            headers=request_headers(settings, request),
            content=content,
            timeout=timeouts_for(timeout),
        )
        try:
            response = http.send(outgoing, stream=True)
        except httpx.HTTPError as error:
            return network_failure(error, settings, request, answering=False)
        keep_open = False
        try:
            ok = 200 <= response.status_code < 300
            if ok and request.response_type == "stream":
                stop_read_timeout(response)
                keep_open = True
                return Success(StreamedResponse(response))
            sink = request.sink if ok and streams_to_sink(response, request) else None
            received = bytearray()
            size = 0
            for chunk in response.iter_bytes():
                if sink is not None:
                    sink.write(chunk)
                    size += len(chunk)
                else:
                    received += chunk
                if deadline is not None and monotonic() > deadline:
                    return timed_out(request.operation, timeout, answering=True)
            if sink is not None:
                return Success(size)
            if ok:
                return Success(read_success(response, bytes(received), request, request.operation))
            return failure_of(response, bytes(received), request, request.operation)
        except httpx.HTTPError as error:
            return network_failure(error, settings, request, answering=True)
        finally:
            if not keep_open:
                response.close()

    def close(self) -> None:
        """Closes the connection pool (not one given as ``http_client``: its owner closes it)."""
        self.http.close()
