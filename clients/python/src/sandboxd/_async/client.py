"""The asyncio client: ``AsyncSandboxd(api_key=..., base_url=...)``, with one attribute per area of the API."""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Optional
from urllib.parse import urlsplit

import httpx

from ..models import GetReadyzResponse
from ..types import ExecuteResult, HealthStatus, Language
from .._connection import VerifyTypes, ssl_context_for
from .._http import Settings
from ._streams import OnOutput

from .resources.api_keys import ApiKeys
from .resources.apps import Apps
from .resources.admin import Admin
from .resources.audit import Audit
from .resources.egress import Egress
from .resources.auth import Auth
from .resources.browser import Browser
from .resources.cli_auth import CliAuth
from .resources.computer_use import ComputerUse
from .resources.contexts import Contexts
from .resources.custom_domains import CustomDomains
from .resources.events import Events
from .resources.execution import DEFAULT_EXECUTE_TIMEOUT_SECONDS, Execution
from .resources.executions import AsyncExecutionRun, Executions
from .resources.files import Files
from .resources.processes import Processes
from .resources.sandboxes import Sandboxes
from .resources.sessions import Sessions
from .resources.shares import Shares
from .resources.snapshots import Snapshots
from .resources.ssh_keys import SshKeys
from .resources.templates import Templates
from .resources.usage import Usage
from .resources.vaults import Vaults
from .resources.terminals import Terminals
from .resources.vms import Vms
from .resources.volumes import Volumes
from .resources.networks import Networks
from .resources.webhooks import Webhooks
from .transport import AsyncTransport

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
#: Seconds each attempt of a request may take (the TypeScript client's 300000 ms); execute allows its own wait.
DEFAULT_TIMEOUT = 300.0
DEFAULT_MAX_RETRIES = 3
#: Seconds before the first retry (doubling each time; ``Retry-After`` wins when the server sends it).
DEFAULT_RETRY_DELAY = 1.0
#: Connections an asyncio client's pool opens at most (requests beyond wait for one, open streams hold one).
DEFAULT_MAX_CONCURRENCY = 64


def _env(name: str) -> Optional[str]:
    value = os.environ.get(name)
    return value if value else None


def _non_negative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a number ≥ 0, got {value!r}")
    return float(value)


class AsyncSandboxd:
    """The sandboxd client (asyncio).

    ``api_key``: sent as ``X-API-Key`` on every request (default: ``$SANDBOXD_API_KEY``); ``access_token``: a
    bearer token from ``auth.token()``, used when there is no key. ``base_url``: default ``$SANDBOXD_URL``, else
    http://127.0.0.1:8080. ``timeout``: seconds each attempt may take (300; 0: no limit); ``max_retries`` (3) of what is
    safe to retry, ``retry_delay`` seconds apart (1), doubling. ``headers``: extra headers on every request.

    Connections: one pool of keep-alive connections per client (httpx). ``verify``: TLS verification, True (the
    default CA bundle, or ``SSL_CERT_FILE``), False (none: a test server only), a CA bundle's path or an
    ``ssl.SSLContext``; the terminals' WebSockets use it too. ``proxy``: a proxy URL for every request (default:
    ``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` from the environment, ``NO_PROXY`` honoured; the terminals'
    WebSockets connect directly). ``http_client``: an httpx client of your own to send the requests (its
    ``verify``, proxies and limits apply; ``verify`` here still serves the terminals); the client does not close it.
    Close the client (its pool) at the end: ``async with AsyncSandboxd() as client:``, or ``await client.aclose()``.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        *,
        access_token: Optional[str] = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        retry_delay: float = DEFAULT_RETRY_DELAY,
        headers: Optional[Mapping[str, str]] = None,
        verify: VerifyTypes = True,
        proxy: Optional[str] = None,
        http_client: Optional[httpx.AsyncClient] = None,
        # Connections of the pool at most (64): requests beyond wait for one.  # async only
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,  # async only
    ) -> None:
        api_key = api_key if api_key is not None else _env("SANDBOXD_API_KEY")
        url = (base_url or _env("SANDBOXD_URL") or DEFAULT_BASE_URL).rstrip("/")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f'base_url must be an absolute http(s) URL, got "{url}"')
        if parts.query or parts.fragment:
            raise ValueError(f'base_url must not have a query or a fragment, got "{url}"')
        #: The server's address, without a trailing slash.
        self.base_url = url
        #: Seconds per attempt.
        self.timeout = _non_negative("timeout", timeout)
        self.max_retries = int(_non_negative("max_retries", max_retries))
        #: Seconds before the first retry.
        self.retry_delay = _non_negative("retry_delay", retry_delay)
        if http_client is not None and proxy is not None:
            raise ValueError("give proxy or http_client, not both: set the proxy on your http_client")
        settings = Settings(
            base_url=url,
            api_key=api_key,
            access_token=access_token,
            timeout=self.timeout,
            max_retries=self.max_retries,
            retry_delay=self.retry_delay,
            headers=dict(headers or {}),
            ssl_context=ssl_context_for(verify),
        )
        pool_size: Optional[int] = None  # no cap: a thread waits for no other's connection
        pool_size = int(_non_negative("max_concurrency", max_concurrency)) or 1  # async only
        #: The HTTP layer, for operations the client has no method for.
        self.transport = AsyncTransport(settings, pool_size, proxy=proxy, http_client=http_client)
        transport = self.transport
        self.executions = Executions(transport)
        self._execution = Execution(transport, self.executions)
        self.files = Files(transport)
        #: Background processes in a session's VM: start, run, output, stdin, signals, kill.
        self.processes = Processes(transport)
        #: Python contexts of a session: interpreters of their own in its VM (``execute(code, context_id=...)``).
        self.contexts = Contexts(transport)
        self.sessions = Sessions(transport, self)
        self.sandboxes = Sandboxes(transport)
        self.vms = Vms(transport)
        self.snapshots = Snapshots(transport)
        #: Persistent volumes.
        self.volumes = Volumes(transport)
        #: Private networks between your VMs.
        self.networks = Networks(transport)
        #: Apps: folders deployed as services at their own URLs, versioned (deploy, redeploy, rollback).
        self.apps = Apps(transport)
        self.api_keys = ApiKeys(transport)
        #: SSH public keys (logins through the SSH gateway) and the gateway's address.
        self.ssh_keys = SshKeys(transport)
        self.auth = Auth(transport)
        self.cli_auth = CliAuth(transport)
        self.webhooks = Webhooks(transport)
        self.audit = Audit(transport)
        self.egress = Egress(transport)
        #: Vaults: secrets VMs use without holding them (swapped in on the way out to the hosts they are bound to).
        self.vaults = Vaults(transport)
        self.usage = Usage(transport)
        self.admin = Admin(transport)
        self.events = Events(transport)
        self.shares = Shares(transport)
        self.custom_domains = CustomDomains(transport)
        self.terminals = Terminals(transport)
        #: Templates built from OCI images: VMs start from them by name.
        self.templates = Templates(transport)
        #: Browser automation: sessions driven by interactions, one-shot renders, usage, stored credentials.
        self.browser = Browser(transport)
        #: Desktop sessions: actions, screenshots, the viewer, recordings.
        self.computer_use = ComputerUse(transport, self.sessions)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    @property
    def has_credentials(self) -> bool:
        """True when an API key or token is configured (it may still be wrong)."""
        settings = self.transport.settings
        return bool(settings.api_key or settings.access_token)

    async def execute(
        self,
        code: str,
        *,
        session_id: Optional[str] = None,
        language: Language = "python",
        timeout: float = DEFAULT_EXECUTE_TIMEOUT_SECONDS,
        raise_on_error: bool = False,
        context_id: Optional[str] = None,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
    ) -> ExecuteResult:
        """Runs code and waits. Without ``session_id`` the server makes a new session (its id is in the answer);
        prefer ``sessions.create()`` and ``session.execute()`` to keep state between calls. ``context_id``
        (Python only): run in that context of the session (``contexts.create``) instead of its default one.
        ``on_stdout``/``on_stderr`` (E2B's names): called with each piece of output as the code writes it (the
        call is streamed; the answer still has all of it)."""
        return await self._execution.execute(
            code, session_id, language, timeout, raise_on_error, context_id, on_stdout=on_stdout, on_stderr=on_stderr
        )

    async def execute_async(
        self,
        code: str,
        *,
        session_id: Optional[str] = None,
        language: Language = "python",
        timeout: float = DEFAULT_EXECUTE_TIMEOUT_SECONDS,
        context_id: Optional[str] = None,
    ) -> AsyncExecutionRun:
        """Starts a run and returns at once; ``await run.wait()`` polls its record once a second. ``context_id``
        (Python only): run in that context of the session instead of its default one."""
        return await self._execution.execute_async(code, session_id, language, timeout, context_id)

    async def health(self) -> HealthStatus:
        """GET /healthz: the server is up."""
        return await self.transport.request("GET", "/healthz", anonymous=True)

    async def ready(self) -> GetReadyzResponse:
        """GET /readyz: the store answers and the default template is warm here (else 503 with `checks`)."""
        return await self.transport.request("GET", "/readyz", anonymous=True)

    async def aclose(self) -> None:
        """Closes the client's connection pool (an ``http_client`` you gave stays open: close it yourself)."""
        await self.transport.aclose()

    async def __aenter__(self) -> "AsyncSandboxd":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
