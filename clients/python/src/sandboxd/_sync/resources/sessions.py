# Generated from sandboxd/_async/resources/sessions.py by scripts/unasync.py: do not edit.
"""Sessions: create one (a Session object), or act on one by id."""

from __future__ import annotations

from typing import TYPE_CHECKING, Dict, List, Optional

from ...models import EgressPolicyInput, LifecycleHooks, SessionStatus, SessionUsage
from ...types import AppUrl, KillResult, SessionDetails
from ..._http import defined
from ..session import Session
from ..transport import Transport

if TYPE_CHECKING:
    from ..context import SessionClient


class Sessions:
    def __init__(self, transport: Transport, client: "SessionClient") -> None:
        self._transport = transport
        self._client = client

    def create(
        self,
        *,
        vcpu_count: Optional[int] = None,
        memory_mb: Optional[int] = None,
        vm_lifetime_seconds: Optional[int] = None,
        metadata: Optional[Dict[str, str]] = None,
        env: Optional[Dict[str, str]] = None,
        prewarm: Optional[bool] = None,
        snapshot: Optional[str] = None,
        template: Optional[str] = None,
        lifecycle_hooks: Optional[LifecycleHooks] = None,
        egress_policy: Optional[EgressPolicyInput] = None,
        vault_ids: Optional[List[str]] = None,
        networks: Optional[List[str]] = None,
        auto_pause: Optional[int] = None,
        on_expiry: Optional[str] = None,
    ) -> Session:
        """A new session. Its VM starts on the first execute (or now, in the background, with ``prewarm=True``).

        ``vcpu_count``: 1, 2 (default), 4, 6 or 8; ``memory_mb``: 128 to 8192 (default: the server's);
        ``vm_lifetime_seconds``: 20 to 2592000 (default 300); ``metadata``: your key/value pairs (the sandbox
        list filters on them); ``env``: the environment of every execution; ``snapshot``/``template``: start its
        VMs from your snapshot or template of this name; ``lifecycle_hooks``: hooks every VM of the session
        inherits, e.g. ``{"pre_stop": {"command": "sync", "timeout_seconds": 10}}`` (run before a kill, a pause or
        the end of the VM's lifetime; 1 to 120 s, default 30); ``egress_policy``: what its VMs may reach, e.g.
        ``{"allowed_domains": ["pypi.org"]}`` (enforced on the host; see ``client.egress``); ``vault_ids``: your
        vaults whose secrets its VMs use without holding them (each an environment variable holding a placeholder;
        see ``client.vaults``); ``networks``: your private networks (names or ids) each of its VMs joins at start
        (see ``client.networks``); ``auto_pause``: pause its VMs after this many seconds of idleness (10 to 2592000;
        default never), the next request that needs a paused VM resumes it (an execute's result then has
        ``resumed: {"ms": ...}``); ``on_expiry``: ``"kill"`` (default) or ``"pause"`` a VM when its lifetime ends.
        """
        info = self._transport.request(
            "POST",
            "/v1/sessions/session",
            json=defined(
                vcpu_count=vcpu_count,
                memory_mb=memory_mb,
                vm_lifetime_seconds=vm_lifetime_seconds,
                metadata=metadata,
                env=env,
                prewarm=prewarm,
                snapshot=snapshot,
                template=template,
                lifecycle_hooks=lifecycle_hooks,
                egress_policy=egress_policy,
                vault_ids=vault_ids,
                networks=networks,
                auto_pause=auto_pause,
                on_expiry=on_expiry,
            ),
        )
        return Session(self._client, info["session_id"], info)

    def connect(self, session_id: str) -> Session:
        """A Session object for an existing session id (no request is made)."""
        return Session(self._client, session_id)

    def status(self, session_id: str) -> SessionStatus:
        return self._transport.request(
            "GET", "/v1/sessions/status/{session_id}", params={"session_id": session_id}, kind="session"
        )

    def info(self, session_id: str) -> SessionDetails:
        """Settings, metadata, env names and the current VM."""
        return self._transport.request(
            "GET", "/v1/sessions/session/{session_id}", params={"session_id": session_id}, kind="session"
        )

    def usage(self, session_id: str) -> SessionUsage:
        return self._transport.request(
            "GET", "/v1/sessions/usage/{session_id}", params={"session_id": session_id}, kind="session"
        )

    def kill(self, session_id: str) -> KillResult:
        """Kills the session's VM: SessionError (404) when there is none, AuthenticationError (403) for someone
        else's session."""
        return self._transport.request("POST", "/kill", json={"session_id": session_id}, kind="kill")

    def app_url(self, session_id: str, port: int = 80) -> AppUrl:
        """The public URL of a port inside the VM."""
        return self._transport.request(
            "GET",
            "/v1/sessions/app-url/{session_id}",
            params={"session_id": session_id},
            query={"port": port},
            kind="session",
        )
