"""GET /v1/admin/...: operations for administrators (403 for anyone else)."""

from __future__ import annotations

from ...models import AdminNodeList, AdminStorage, AdminStorageGc, AdminUser, AdminUserList
from ..transport import AsyncTransport


class Admin:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def users(self) -> AdminUserList:
        """Every user with plan and role, and the plans the server knows."""
        return await self._transport.request("GET", "/v1/admin/users")

    async def set_user_plan(self, user_id: int, plan: str) -> AdminUser:
        """Moves a user to another plan (one of ``users()["plans"]``); its limits apply from the user's next request."""
        return await self._transport.request(
            "PATCH", "/v1/admin/users/{user_id}", params={"user_id": user_id}, json={"plan": plan}
        )

    async def nodes(self) -> AdminNodeList:
        """The nodes of the deployment with state, capacity and load."""
        return await self._transport.request("GET", "/v1/admin/nodes")

    async def storage(self) -> AdminStorage:
        """What the cluster's object store holds of paused VMs, snapshots and templates, and each node's cache."""
        return await self._transport.request("GET", "/v1/admin/storage")

    async def collect_garbage(self, *, dry_run: bool = False) -> AdminStorageGc:
        """Collects the object store's garbage now (``dry_run``: counts what it would delete)."""
        return await self._transport.request("POST", "/v1/admin/storage/gc", query={"dry_run": dry_run})
