"""GET /v1/sessions/sandboxes: your sandboxes (one per VM), newest first, filtered by session metadata."""

from __future__ import annotations

import json
from typing import Dict, List, Optional

from ...models import SandboxInfo
from ..transport import AsyncTransport


class Sandboxes:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def list(
        self, *, metadata: Optional[Dict[str, str]] = None, limit: Optional[int] = None
    ) -> List[SandboxInfo]:
        """``metadata``: only sandboxes whose session metadata has every pair. ``limit``: 1 to 1000 (default 100)."""
        filters = json.dumps(metadata, separators=(",", ":")) if metadata else None
        return await self._transport.request(
            "GET", "/v1/sessions/sandboxes", query={"metadata": filters, "limit": limit}
        )
