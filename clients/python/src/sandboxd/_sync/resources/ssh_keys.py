# Generated from sandboxd/_async/resources/ssh_keys.py by scripts/unasync.py: do not edit.
"""SSH public keys of the caller (they log in to the caller's VMs and sessions through the server's SSH gateway),
and where that gateway listens."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from ...models import SshGatewayInfo, SshKeyRecord
from ..._http import MISSING
from ..transport import Transport


class SshKeys:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def create(self, public_key: str, *, name: Optional[str] = MISSING) -> SshKeyRecord:
        """Registers a public key (one line of a ``.pub`` file); ``name`` defaults to the key's comment."""
        body: Dict[str, Any] = {"public_key": public_key}
        if name is not MISSING:
            body["name"] = name
        return self._transport.request("POST", "/v1/ssh-keys", json=body)

    def list(self) -> List[SshKeyRecord]:
        return self._transport.request("GET", "/v1/ssh-keys")

    def get(self, key_id: int) -> SshKeyRecord:
        return self._transport.request("GET", "/v1/ssh-keys/{key_id}", params={"key_id": key_id})

    def delete(self, key_id: int) -> None:
        """Deletes a key: it stops logging in at once."""
        self._transport.request(
            "DELETE", "/v1/ssh-keys/{key_id}", params={"key_id": key_id}, response_type="none"
        )

    def info(self) -> SshGatewayInfo:
        """The SSH gateway's host, port and host key fingerprint (``enabled`` is False when the server runs without it)."""
        return self._transport.request("GET", "/v1/ssh/info")
