# Generated from sandboxd/_async/resources/admin.py by scripts/unasync.py: do not edit.
"""GET /v1/admin/...: operations for administrators (403 for anyone else)."""

from __future__ import annotations

from ...models import AdminNodeList, AdminStorage, AdminStorageGc, AdminUser, AdminUserList
from ..transport import Transport


class Admin:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def users(self) -> AdminUserList:
        """Every user with plan and role, and the plans the server knows."""
        return self._transport.request("GET", "/v1/admin/users")

    def set_user_plan(self, user_id: int, plan: str) -> AdminUser:
        """Moves a user to another plan (one of ``users()["plans"]``); its limits apply from the user's next request."""
        return self._transport.request(
            "PATCH", "/v1/admin/users/{user_id}", params={"user_id": user_id}, json={"plan": plan}
        )

    def nodes(self) -> AdminNodeList:
        """The nodes of the deployment with state, capacity and load."""
        return self._transport.request("GET", "/v1/admin/nodes")

    def storage(self) -> AdminStorage:
        """What the cluster's object store holds of paused VMs, snapshots and templates, and each node's cache."""
        return self._transport.request("GET", "/v1/admin/storage")

    def collect_garbage(self, *, dry_run: bool = False) -> AdminStorageGc:
        """Collects the object store's garbage now (``dry_run``: counts what it would delete)."""
        return self._transport.request("POST", "/v1/admin/storage/gc", query={"dry_run": dry_run})
