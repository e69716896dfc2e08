"""GET /v1/usage: your executions, VM time and CPU time per UTC day."""

from __future__ import annotations

from typing import Optional

from ...models import DailyUsageList
from ..transport import AsyncTransport


class Usage:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def daily(self, *, days: Optional[int] = None) -> DailyUsageList:
        """The last ``days`` days (default 14, at most 90), oldest first, today last."""
        return await self._transport.request("GET", "/v1/usage", query={"days": days})
