"""POST /v1/auth/token: a bearer token for a username and password (pass it as ``access_token``)."""

from __future__ import annotations

from ...types import TokenResponse
from ..transport import AsyncTransport


class Auth:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def token(self, *, username: str, password: str) -> TokenResponse:
        return await self._transport.request(
            "POST",
            "/v1/auth/token",
            json={"username": username, "password": password, "grant_type": "password"},
            anonymous=True,
        )
