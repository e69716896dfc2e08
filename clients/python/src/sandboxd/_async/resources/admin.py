"""GET /v1/admin/...: operations for administrators (403 for anyone else)."""

from __future__ import annotations

from ...models import AdminNodeList, AdminUserList
from ..transport import AsyncTransport


class Admin:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def users(self) -> AdminUserList:
        """Every user with plan and role, and the plans the server knows."""
        return await self._transport.request("GET", "/v1/admin/users")

    async def nodes(self) -> AdminNodeList:
        """The nodes of the deployment with state, capacity and load."""
        return await self._transport.request("GET", "/v1/admin/nodes")
