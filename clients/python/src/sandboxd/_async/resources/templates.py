"""Templates: VMs' root images built from OCI images (a build runs on the server; follow it, then start VMs
by name). ``snapshots.create`` starts the same build."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

from ...errors import SandboxdError, TemplateBuildFailedError
from ...models import TemplateRecord
from ...types import TemplateLog
from ..._http import defined
from .._backend import monotonic
from ..transport import AsyncTransport

#: Lines per page of a log read, and how long one read may wait for news (the server's maximum).
PAGE_LINES = 5000
LOG_WAIT_SECONDS = 30


def template_body(
    name: str,
    oci_image: str,
    git_clone_url: Optional[str],
    git_clone_branch: Optional[str],
    post_build_cmd: Optional[str],
    envs: Optional[Dict[str, str]],
    registry_auth: Optional[Dict[str, str]],
    vcpu_count: Optional[int],
    memory_mb: Optional[int],
) -> Dict[str, Any]:
    build_args = defined(
        git_clone_url=git_clone_url, git_clone_branch=git_clone_branch, post_build_cmd=post_build_cmd, envs=envs
    )
    return {
        "name": name,
        "oci_image": oci_image,
        **({"build_args": build_args} if build_args else {}),
        **defined(registry_auth=registry_auth, vcpu_count=vcpu_count, memory_mb=memory_mb),
    }


class Templates:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(
        self,
        *,
        name: str,
        oci_image: str,
        git_clone_url: Optional[str] = None,
        git_clone_branch: Optional[str] = None,
        post_build_cmd: Optional[str] = None,
        envs: Optional[Dict[str, str]] = None,
        registry_auth: Optional[Dict[str, str]] = None,
        vcpu_count: Optional[int] = None,
        memory_mb: Optional[int] = None,
    ) -> TemplateRecord:
        """Starts a build; answers at once with the template ``building`` (see ``wait_until_ready``).

        ``oci_image``: ``[registry/]repository[:tag][@digest]``; ``git_clone_url``: cloned into
        ``/workspace/<repository name>``; ``post_build_cmd``: run in the build VM after the clone, with ``envs``;
        ``registry_auth``: ``{"username", "password"}`` for the pull only (never stored or shown).
        """
        return await self._transport.request(
            "POST",
            "/v1/templates",
            json=template_body(
                name,
                oci_image,
                git_clone_url,
                git_clone_branch,
                post_build_cmd,
                envs,
                registry_auth,
                vcpu_count,
                memory_mb,
            ),
        )

    async def list(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> List[TemplateRecord]:
        """The built-in template (``default``), then yours, newest first."""
        return await self._transport.request("GET", "/v1/templates", query={"limit": limit, "offset": offset})

    async def get(self, template_id: str) -> TemplateRecord:
        return await self._transport.request("GET", "/v1/templates/{template_id}", params={"template_id": template_id})

    async def logs(
        self,
        template_id: str,
        *,
        after: Optional[int] = None,
        limit: Optional[int] = None,
        wait_seconds: Optional[int] = None,
    ) -> TemplateLog:
        """A page of the build's log after line ``after`` (0: from the start), with the build's status and step.
        With ``wait_seconds`` (at most 30) the server holds a request that finds no new line until one comes or
        the build ends."""
        return await self._transport.request(
            "GET",
            "/v1/templates/{template_id}/logs",
            params={"template_id": template_id},
            query={"after": after, "limit": limit, "wait_seconds": wait_seconds},
            timeout=max(self._transport.settings.timeout, (wait_seconds or 0) + 30.0),
        )

    async def delete(self, template_id: str) -> None:
        """Deletes the template (a build under way is cancelled); a SandboxdError with status 409 while a VM or a
        snapshot builds on it."""
        await self._transport.request("DELETE", "/v1/templates/{template_id}", params={"template_id": template_id})

    async def wait_until_ready(
        self,
        template_id: str,
        *,
        timeout: float = 1800.0,
        on_line: Optional[Callable[[str], None]] = None,
    ) -> TemplateRecord:
        """Follows the build's log until it is over: answers the ready template, raises TemplateBuildFailedError
        when it failed, or SandboxdError when ``timeout`` seconds pass first (the build goes on)."""
        deadline = monotonic() + timeout
        after = 0
        while True:
            remaining = int(deadline - monotonic())
            # Long polling: the server answers as soon as there is a new line or the build ended.
            page = await self.logs(
                template_id, after=after, limit=PAGE_LINES, wait_seconds=max(1, min(LOG_WAIT_SECONDS, remaining))
            )
            for line in page["lines"]:
                if on_line is not None:
                    on_line(line["line"])
            after = page["next_after"]
            # A full page may have more behind it; the status came with the log complete.
            if page["status"] != "building" and len(page["lines"]) < PAGE_LINES:
                template = await self.get(template_id)
                if template["status"] == "failed":
                    raise TemplateBuildFailedError(
                        f"template {template['name']} failed to build: {template['error'] or 'no reason recorded'}",
                        template_id=template_id,
                        step=template["progress"]["step"],
                    )
                return template
            if len(page["lines"]) < PAGE_LINES and monotonic() >= deadline:
                raise SandboxdError(f"template {template_id} is still building after {timeout} s")
