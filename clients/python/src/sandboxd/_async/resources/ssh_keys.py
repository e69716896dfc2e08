"""SSH public keys of the caller (they log in to the caller's VMs and sessions through the server's SSH gateway),
and where that gateway listens."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ...models import SshGatewayInfo, SshKeyRecord
from ..._http import MISSING
from ..transport import AsyncTransport


class SshKeys:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(self, public_key: str, *, name: Optional[str] = MISSING) -> SshKeyRecord:
        """Registers a public key (one line of a ``.pub`` file); ``name`` defaults to the key's comment."""
        body: Dict[str, Any] = {"public_key": public_key}
        if name is not MISSING:
            body["name"] = name
        return await self._transport.request("POST", "/v1/ssh-keys", json=body)

    async def list(self) -> List[SshKeyRecord]:
        return await self._transport.request("GET", "/v1/ssh-keys")

    async def get(self, key_id: int) -> SshKeyRecord:
        return await self._transport.request("GET", "/v1/ssh-keys/{key_id}", params={"key_id": key_id})

    async def delete(self, key_id: int) -> None:
        """Deletes a key: it stops logging in at once."""
        await self._transport.request(
            "DELETE", "/v1/ssh-keys/{key_id}", params={"key_id": key_id}, response_type="none"
        )

    async def info(self) -> SshGatewayInfo:
        """The SSH gateway's host, port and host key fingerprint (``enabled`` is False when the server runs without it)."""
        return await self._transport.request("GET", "/v1/ssh/info")
