"""Shares: open a port of a session to others (public, or through signed expiring links)."""

from __future__ import annotations

from typing import List, Optional

from ...models import Share
from ..transport import AsyncTransport


class Shares:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(
        self, *, session_id: str, port: int, is_public: bool = False, expires_in_seconds: Optional[int] = None
    ) -> Share:
        """Shares a port (1 to 65535) of the session's VM. ``is_public=True``: anyone may open it; otherwise only
        holders of the signed link in the answer's ``url``. ``expires_in_seconds`` (60 to 2592000): revoked by
        itself then (default: until deleted)."""
        body = {"session_id": session_id, "port": port, "is_public": is_public}
        if expires_in_seconds is not None:
            body["expires_in_seconds"] = expires_in_seconds
        return await self._transport.request("POST", "/v1/shares", json=body)

    async def list(self, *, session_id: Optional[str] = None) -> List[Share]:
        """Your shares, newest first; ``session_id`` narrows to one session."""
        answer = await self._transport.request("GET", "/v1/shares", query={"session_id": session_id})
        return answer["shares"]

    async def get(self, share_id: str) -> Share:
        """A share (a private one with a fresh signed link)."""
        return await self._transport.request("GET", "/v1/shares/{share_id}", params={"share_id": share_id})

    async def delete(self, share_id: str) -> Share:
        """Revokes a share at once: its links and cookies stop working."""
        return await self._transport.request("DELETE", "/v1/shares/{share_id}", params={"share_id": share_id})
