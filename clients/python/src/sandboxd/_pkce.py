"""PKCE (RFC 7636, S256) for the command-line login: a random verifier, and its challenge
base64url(SHA-256(verifier))."""

from __future__ import annotations

import base64
import hashlib
import secrets
from typing import NamedTuple


class PkcePair(NamedTuple):
    #: Kept by the client; sent only to the exchange.
    code_verifier: str
    #: Sent to start.
    code_challenge: str
    code_challenge_method: str = "S256"


def _base64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def code_challenge_of(code_verifier: str) -> str:
    """The S256 challenge of a verifier."""
    return _base64url(hashlib.sha256(code_verifier.encode("ascii")).digest())


def create_pkce_pair() -> PkcePair:
    """A fresh verifier (32 random bytes: 43 characters) and its challenge."""
    verifier = _base64url(secrets.token_bytes(32))
    return PkcePair(verifier, code_challenge_of(verifier))
