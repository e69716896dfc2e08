# Generated from sandboxd/_async/resources/api_keys.py by scripts/unasync.py: do not edit.
"""API keys of the caller: create (the only time the full key is shown), list, get, update, delete, check."""

from __future__ import annotations

import datetime
from typing import Any, Dict, List, Optional, Union

from ...models import ApiKeyRecord
from ...types import ApiKeyDeleteResult
from ..._http import MISSING
from ..transport import Transport

ExpiresAt = Union[str, datetime.datetime, None]


def _changes(description: Any, expires_at: Any) -> Dict[str, Any]:
    body: Dict[str, Any] = {}
    if description is not MISSING:
        body["description"] = description
    if expires_at is not MISSING:
        if isinstance(expires_at, datetime.datetime):
            if expires_at.tzinfo is None:
                raise ValueError(
                    "expires_at must be timezone-aware (e.g. datetime.now(timezone.utc) + timedelta(days=30))"
                )
            expires_at = expires_at.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
        body["expires_at"] = expires_at
    return body


class ApiKeys:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def create(self, *, description: Optional[str] = MISSING, expires_at: ExpiresAt = MISSING) -> ApiKeyRecord:
        """Creates a key; ``full_key`` in the answer is the key itself, shown this once.

        ``expires_at``: an ISO date-time or an aware ``datetime``; None (or left out) for a key that never expires.
        """
        return self._transport.request("POST", "/v1/api-keys/", json=_changes(description, expires_at))

    def list(self) -> List[ApiKeyRecord]:
        return self._transport.request("GET", "/v1/api-keys/")

    def get(self, key_id: int) -> ApiKeyRecord:
        return self._transport.request("GET", "/v1/api-keys/{item_id}", params={"item_id": key_id})

    def update(
        self, key_id: int, *, description: Optional[str] = MISSING, expires_at: ExpiresAt = MISSING
    ) -> ApiKeyRecord:
        """Changes what is given (None clears it: no description, never expires); the rest is kept."""
        return self._transport.request(
            "PATCH", "/v1/api-keys/{item_id}", params={"item_id": key_id}, json=_changes(description, expires_at)
        )

    def delete(self, key_id: int) -> ApiKeyDeleteResult:
        """Deletes a key: it stops working at once."""
        return self._transport.request("DELETE", "/v1/api-keys/{item_id}", params={"item_id": key_id})

    def check(self) -> bool:
        """HEAD /v1/api-keys/: True when the credentials work (raises AuthenticationError when they do not)."""
        self._transport.request("HEAD", "/v1/api-keys/")
        return True
