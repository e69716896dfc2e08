"""GET /v1/audit/events: security-relevant actions (yours; everyone's for an administrator)."""

from __future__ import annotations

from typing import Optional

from ...models import AuditEventList
from ..transport import AsyncTransport


class Audit:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def list(
        self,
        *,
        limit: Optional[int] = None,
        status: Optional[str] = None,
        action: Optional[str] = None,
        cursor: Optional[str] = None,
    ) -> AuditEventList:
        """A page of events, newest first (``status``: "success" or "failure"); pass ``next_cursor`` as ``cursor``."""
        return await self._transport.request(
            "GET", "/v1/audit/events", query={"limit": limit, "status": status, "action": action, "cursor": cursor}
        )
