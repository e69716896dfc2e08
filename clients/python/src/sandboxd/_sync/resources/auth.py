# Generated from sandboxd/_async/resources/auth.py by scripts/unasync.py: do not edit.
"""POST /v1/auth/token: a bearer token for a username and password (pass it as ``access_token``)."""

from __future__ import annotations

from ...types import TokenResponse
from ..transport import Transport


class Auth:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def token(self, *, username: str, password: str) -> TokenResponse:
        return self._transport.request(
            "POST",
            "/v1/auth/token",
            json={"username": username, "password": password, "grant_type": "password"},
            anonymous=True,
        )
