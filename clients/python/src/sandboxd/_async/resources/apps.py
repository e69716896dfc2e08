"""Apps: a folder (its ``sandboxd.yaml`` manifest at the root) deployed as a long-running service at a URL of its
own; each deployment is a version, and a redeploy or a rollback goes live without downtime."""

from __future__ import annotations

import os
from typing import Any, AsyncIterator, Callable, List, Optional, Union

import httpx

from ..._app_folder import pack_app_folder
from ..._http import Body
from ...models import AppDeploymentAccepted, AppRecord, DeploymentRecord
from ..._lines import LineBuffer
from .._backend import sleep
from ..transport import AsyncTransport

#: Statuses after which a deployment changes no more.
_OVER = ("live", "failed", "stopped", "superseded")


class Apps:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def deploy(
        self, source: Union[bytes, str, "os.PathLike[str]"], *, name: Optional[str] = None
    ) -> AppDeploymentAccepted:
        """Uploads an app and deploys it; answers at once with ``{"app": …, "deployment": …}`` (the deployment
        under way: ``wait_for_deployment`` follows it). ``source``: a folder's path (packed here with ``tarfile``,
        leaving out ``.git``, ``node_modules``, ``__pycache__`` and what ``.sandboxdignore`` lists), or the
        gzipped tar itself as bytes. A new name creates the app, an existing one gets its next version; ``name``
        is used when the manifest has none."""
        data = bytes(source) if isinstance(source, (bytes, bytearray)) else pack_app_folder(source)
        body = Body("application/gzip", len(data), lambda: [data])
        return await self._transport.request(
            "POST",
            "/v1/apps/deployments",
            query={"name": name},
            body=body,
            # At least 1 MiB/s on top of two minutes for the upload.
            timeout=120.0 + len(data) / 2**20,
        )

    async def list(self) -> List[AppRecord]:
        """Your apps."""
        answer = await self._transport.request("GET", "/v1/apps")
        return answer["apps"]

    async def get(self, app: str) -> AppRecord:
        """An app by its id or its name."""
        return await self._transport.request("GET", "/v1/apps/{app}", params={"app": app})

    async def delete(self, app: str) -> None:
        """Deletes the app: its VMs stop, its URL stops answering at once."""
        await self._transport.request("DELETE", "/v1/apps/{app}", params={"app": app}, response_type="none")

    async def deployments(self, app: str) -> List[DeploymentRecord]:
        """The app's deployments (its versions), newest first."""
        answer = await self._transport.request("GET", "/v1/apps/{app}/deployments", params={"app": app})
        return answer["deployments"]

    async def deployment(self, app: str, version: int) -> DeploymentRecord:
        """One deployment (a version) of the app."""
        return await self._transport.request(
            "GET", "/v1/apps/{app}/deployments/{version}", params={"app": app, "version": version}
        )

    async def deployment_logs(self, app: str, version: int) -> str:
        """A deployment's log so far (upload, install output, start, health checks, the switch)."""
        return await self._transport.request(
            "GET",
            "/v1/apps/{app}/deployments/{version}/logs",
            params={"app": app, "version": version},
            query={"follow": False},
            headers={"accept": "text/plain"},
            response_type="text",
        )

    async def logs(self, app: str) -> str:
        """The running app's output so far (its start command's stdout and stderr; each line after ``[r1] ``…
        when it has several replicas)."""
        return await self._transport.request(
            "GET",
            "/v1/apps/{app}/logs",
            params={"app": app},
            query={"follow": False},
            headers={"accept": "text/plain"},
            response_type="text",
        )

    async def follow_deployment_logs(self, app: str, version: int) -> AsyncIterator[str]:
        """A deployment's log line by line as it comes, until the deployment is live, failed or stopped."""
        response = await self._transport.request(
            "GET",
            "/v1/apps/{app}/deployments/{version}/logs",
            params={"app": app, "version": version},
            query={"follow": True},
            headers={"accept": "text/plain"},
            response_type="stream",
        )
        return _lines(response)

    async def follow_logs(self, app: str) -> AsyncIterator[str]:
        """The running app's output line by line as it comes, until the caller stops reading."""
        response = await self._transport.request(
            "GET",
            "/v1/apps/{app}/logs",
            params={"app": app},
            query={"follow": True},
            headers={"accept": "text/plain"},
            response_type="stream",
        )
        return _lines(response)

    async def wait_for_deployment(
        self, app: str, version: int, *, on_line: Optional[Callable[[str], None]] = None
    ) -> DeploymentRecord:
        """Follows a deployment until it is over (live, failed, stopped or superseded) and answers its final
        record; ``on_line`` is called with each line of its log. A log that breaks off is followed on by polling
        the record once a second."""
        try:
            async for line in await self.follow_deployment_logs(app, version):
                if on_line is not None:
                    on_line(line)
        except httpx.HTTPError:
            pass  # the log broke off: the record says how it ended
        while True:
            record = await self.deployment(app, version)
            if record["status"] in _OVER:
                return record
            await sleep(1.0)

    async def rollback(self, app: str, *, version: Optional[int] = None) -> AppDeploymentAccepted:
        """Brings back an earlier version (default: the one live before the current), without downtime;
        answers ``{"app": …, "deployment": …}``."""
        body = {} if version is None else {"version": version}
        return await self._transport.request("POST", "/v1/apps/{app}/rollback", params={"app": app}, json=body)

    async def restart(self, app: str) -> AppDeploymentAccepted:
        """Starts the live version's VMs again (new ones take over once healthy); answers
        ``{"app": …, "deployment": …}``."""
        return await self._transport.request("POST", "/v1/apps/{app}/restart", params={"app": app})


async def _lines(response: Any) -> AsyncIterator[str]:
    buffer = LineBuffer()
    try:
        async for chunk in response.response.aiter_bytes():
            for line in buffer.feed(chunk):
                yield line.decode("utf-8", errors="replace")
    finally:
        await response.aclose()
