# Generated from sandboxd/_async/resources/admin.py by scripts/unasync.py: do not edit.
"""GET /v1/admin/...: operations for administrators (403 for anyone else)."""

from __future__ import annotations

from ...models import AdminNodeList, AdminUser, AdminUserList
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
