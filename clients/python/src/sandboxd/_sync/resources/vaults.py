# Generated from sandboxd/_async/resources/vaults.py by scripts/unasync.py: do not edit.
"""Vaults of the caller: secrets that VMs use without ever holding them. A session or VM started with
``vault_ids`` sees each secret as an environment variable holding a placeholder, which the server swaps for the
value only at the secret's injection point (``inject``: ``Authorization: Bearer`` by default) in HTTPS requests
to the secret's ``allowed_hosts``. Values go to the server and are never returned (the server masks them in what
the hosts answer); every use is in the vault's request log."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ...models import Vault, VaultRequestLogList, VaultSecret, VaultSecretInjection, VaultSecretInput
from ..._http import MISSING
from ..transport import Transport


def _secret(secret: VaultSecretInput) -> Dict[str, Any]:
    body: Dict[str, Any] = {
        "name": secret["name"],
        "value": secret["value"],
        "allowed_hosts": list(secret["allowed_hosts"]),
    }
    if "inject" in secret:
        body["inject"] = dict(secret["inject"])
    return body


class Vaults:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def create(
        self,
        name: str,
        *,
        description: Optional[str] = MISSING,
        secrets: Optional[Sequence[VaultSecretInput]] = None,
    ) -> Vault:
        """Creates a vault, with secrets or without (add them with ``set_secret``).

        ``secrets``: ``[{"name": "OPENAI_API_KEY", "value": "sk-…", "allowed_hosts": ["api.openai.com"]}]``;
        ``name`` is the environment variable VMs see the placeholder in, ``allowed_hosts`` the hosts the value
        may be sent to over HTTPS (``api.example.com``, or ``*.example.com`` for its subdomains), ``inject``
        (optional) where in a request the value may go: ``{"type": "bearer"}`` (the default, ``Authorization:
        Bearer``), ``{"type": "basic"}`` (the user or password of Basic credentials) or ``{"type": "header",
        "name": "X-Api-Key", "prefix": ""}`` (GitHub: name ``Authorization``, prefix ``"token "``). The answer
        lists names, hosts and injection points, never values.
        """
        body: Dict[str, Any] = {"name": name}
        if description is not MISSING:
            body["description"] = description
        if secrets:
            body["secrets"] = [_secret(s) for s in secrets]
        return self._transport.request("POST", "/v1/vaults", json=body)

    def list(self) -> List[Vault]:
        return self._transport.request("GET", "/v1/vaults")

    def get(self, vault_id: str) -> Vault:
        """A vault, with its secrets' names and hosts."""
        return self._transport.request("GET", "/v1/vaults/{vault_id}", params={"vault_id": vault_id})

    def update(
        self, vault_id: str, *, name: Optional[str] = MISSING, description: Optional[str] = MISSING
    ) -> Vault:
        """Renames a vault or changes its description (None clears it); the rest is kept."""
        body: Dict[str, Any] = {}
        if name is not MISSING:
            body["name"] = name
        if description is not MISSING:
            body["description"] = description
        return self._transport.request("PATCH", "/v1/vaults/{vault_id}", params={"vault_id": vault_id}, json=body)

    def delete(self, vault_id: str) -> None:
        """Deletes a vault and its secrets: placeholders running VMs hold stop being swapped at once."""
        self._transport.request(
            "DELETE", "/v1/vaults/{vault_id}", params={"vault_id": vault_id}, response_type="none"
        )

    def set_secret(
        self,
        vault_id: str,
        name: str,
        *,
        value: str,
        allowed_hosts: Sequence[str],
        inject: Optional[VaultSecretInjection] = None,
    ) -> VaultSecret:
        """Adds a secret, or replaces the value and hosts (and, given ``inject``, the injection point) of one: a
        new value reaches running VMs at their next request; a new secret is seen by sessions that attach the
        vault from now on. Without ``inject`` an existing secret keeps its own, a new one gets ``bearer``."""
        body: Dict[str, Any] = {"value": value, "allowed_hosts": list(allowed_hosts)}
        if inject is not None:
            body["inject"] = dict(inject)
        return self._transport.request(
            "PUT",
            "/v1/vaults/{vault_id}/secrets/{name}",
            params={"vault_id": vault_id, "name": name},
            json=body,
        )

    def delete_secret(self, vault_id: str, name: str) -> None:
        """Deletes a secret: its placeholder stops being swapped at once."""
        self._transport.request(
            "DELETE",
            "/v1/vaults/{vault_id}/secrets/{name}",
            params={"vault_id": vault_id, "name": name},
            response_type="none",
        )

    def request_logs(
        self,
        vault_id: str,
        *,
        outcome: Optional[str] = None,
        vm_id: Optional[str] = None,
        secret_name: Optional[str] = None,
        since: Optional[str] = None,
        until: Optional[str] = None,
        limit: Optional[int] = None,
        cursor: Optional[str] = None,
    ) -> VaultRequestLogList:
        """Each use of the vault's secrets, newest first (``outcome``: "substituted" when the value went to a
        bound host, "flagged" when the placeholder went somewhere else); pass ``next_cursor`` as ``cursor``."""
        return self._transport.request(
            "GET",
            "/v1/vaults/{vault_id}/request-logs",
            params={"vault_id": vault_id},
            query={
                "outcome": outcome,
                "vm_id": vm_id,
                "secret_name": secret_name,
                "since": since,
                "until": until,
                "limit": limit,
                "cursor": cursor,
            },
        )
