# Generated from sandboxd/_async/resources/usage.py by scripts/unasync.py: do not edit.
"""GET /v1/usage: your executions, VM time and CPU time per UTC day."""

from __future__ import annotations

from typing import Optional

from ...models import DailyUsageList
from ..transport import Transport


class Usage:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def daily(self, *, days: Optional[int] = None) -> DailyUsageList:
        """The last ``days`` days (default 14, at most 90), oldest first, today last."""
        return self._transport.request("GET", "/v1/usage", query={"days": days})
