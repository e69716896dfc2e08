# Generated from sandboxd/_async/resources/egress.py by scripts/unasync.py: do not edit.
"""Egress policies of VMs and sessions (what a guest may reach, enforced on the host) and a VM's egress log."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ...models import EgressLogList, EgressPolicy
from ..transport import Transport


def egress_policy_body(
    *,
    allow_package_managers: Optional[bool] = None,
    allow_http: Optional[bool] = None,
    allow_https: Optional[bool] = None,
    allowed_domains: Optional[List[str]] = None,
    allowed_cidrs: Optional[List[str]] = None,
    allowed_ports: Optional[List[str]] = None,
) -> Dict[str, Any]:
    """The request body; omitted fields: ``allow_http``/``allow_https`` true, the rest false or empty.

    ``allowed_ports`` (``["22/tcp", "443/udp"]``) opens more ports than HTTP and HTTPS on the addresses of
    allowed names; ``allowed_cidrs`` are open on every port.
    """
    body: Dict[str, Any] = {}
    for key, value in (
        ("allow_package_managers", allow_package_managers),
        ("allow_http", allow_http),
        ("allow_https", allow_https),
        ("allowed_domains", allowed_domains),
        ("allowed_cidrs", allowed_cidrs),
        ("allowed_ports", allowed_ports),
    ):
        if value is not None:
            body[key] = value
    return body


class Egress:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def get_vm(self, vm_id: str) -> EgressPolicy:
        """A VM's policy: its own, its session's, or the default (``source``); ``enforced`` while it runs restricted."""
        return self._transport.request("GET", "/v1/vms/{vm_id}/egress", params={"vm_id": vm_id})

    def set_vm(
        self,
        vm_id: str,
        *,
        allow_package_managers: Optional[bool] = None,
        allow_http: Optional[bool] = None,
        allow_https: Optional[bool] = None,
        allowed_domains: Optional[List[str]] = None,
        allowed_cidrs: Optional[List[str]] = None,
        allowed_ports: Optional[List[str]] = None,
    ) -> EgressPolicy:
        """Replaces a VM's policy; the running VM follows it within a second."""
        return self._transport.request(
            "PUT",
            "/v1/vms/{vm_id}/egress",
            params={"vm_id": vm_id},
            json=egress_policy_body(
                allow_package_managers=allow_package_managers,
                allow_http=allow_http,
                allow_https=allow_https,
                allowed_domains=allowed_domains,
                allowed_cidrs=allowed_cidrs,
                allowed_ports=allowed_ports,
            ),
        )

    def get_session(self, session_id: str) -> EgressPolicy:
        return self._transport.request(
            "GET", "/v1/sessions/{session_id}/egress", params={"session_id": session_id}
        )

    def set_session(
        self,
        session_id: str,
        *,
        allow_package_managers: Optional[bool] = None,
        allow_http: Optional[bool] = None,
        allow_https: Optional[bool] = None,
        allowed_domains: Optional[List[str]] = None,
        allowed_cidrs: Optional[List[str]] = None,
        allowed_ports: Optional[List[str]] = None,
    ) -> EgressPolicy:
        """Replaces a session's policy: its running VM follows it (``updated_vm_ids``), its next VMs start with it."""
        return self._transport.request(
            "PUT",
            "/v1/sessions/{session_id}/egress",
            params={"session_id": session_id},
            json=egress_policy_body(
                allow_package_managers=allow_package_managers,
                allow_http=allow_http,
                allow_https=allow_https,
                allowed_domains=allowed_domains,
                allowed_cidrs=allowed_cidrs,
                allowed_ports=allowed_ports,
            ),
        )

    def log(
        self,
        vm_id: str,
        *,
        verdict: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        destination: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> EgressLogList:
        """A VM's connection attempts, newest first (``verdict``: "allowed" or "refused"); pass ``next_cursor`` as ``cursor``."""
        return self._transport.request(
            "GET",
            "/v1/vms/{vm_id}/egress/log",
            params={"vm_id": vm_id},
            query={
                "verdict": verdict,
                "since": since,
                "until": until,
                "destination": destination,
                "limit": limit,
                "cursor": cursor,
            },
        )
