"""The request loop of the client: one attempt at a time (``_http.attempt``), retried as ``_http.retry_delay``
allows, waiting between attempts without holding a thread."""

from __future__ import annotations

from typing import Any, Mapping, Optional

from .._http import MISSING, Body, Settings, Success, build_request, retry_delay
from ._backend import Pool, run_attempt, sleep


class AsyncTransport:
    """The HTTP layer, for operations the client has no method for:
    ``client.transport.request("GET", "/healthz", anonymous=True)``."""

    def __init__(self, settings: Settings, max_concurrency: int = 64) -> None:
        self.settings = settings
        self.pool = Pool(max_concurrency)

    async def request(
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
        "none" or "stream").

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
            outcome = await run_attempt(self.pool, self.settings, request)
            if isinstance(outcome, Success):
                return outcome.value
            delay = retry_delay(outcome, request, number, self.settings)
            if delay is None:
                raise outcome.error
            await sleep(delay)
            number += 1

    async def aclose(self) -> None:
        self.pool.close()
