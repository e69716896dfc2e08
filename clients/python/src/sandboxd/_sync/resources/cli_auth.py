# Generated from sandboxd/_async/resources/cli_auth.py by scripts/unasync.py: do not edit.
"""The command-line login (device authorization bound with PKCE): ``start`` (no credentials), ``approve`` (as
a signed-in user), ``exchange`` (no credentials; the API key, once), and ``wait_for_key``, which polls the
exchange at the server's interval until the user approves, denies, or the login expires."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from ...errors import SandboxdError
from ...models import CLIAuthApproveResponse, CLIAuthExchangeResponse, CLIAuthStartResponse
from .._backend import monotonic, sleep
from ..transport import Transport


class CliAuth:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def start(self, *, hostname: str, code_challenge: str) -> CLIAuthStartResponse:
        """Starts a login; show ``user_code`` and open ``verification_uri_complete``
        (``sandboxd.create_pkce_pair()`` makes the challenge and its verifier)."""
        return self._transport.request(
            "POST",
            "/api/cli-auth/start",
            json={"hostname": hostname, "code_challenge": code_challenge, "code_challenge_method": "S256"},
            anonymous=True,
        )

    def approve(self, user_code: str, *, deny: bool = False) -> CLIAuthApproveResponse:
        """Approves (or with ``deny=True`` denies) the login with this user code, as the client's user."""
        body: Dict[str, Any] = {"user_code": user_code}
        if deny:
            body["deny"] = True
        return self._transport.request("POST", "/api/cli-auth/approve", json=body)

    def exchange(self, *, device_code: str, code_verifier: str) -> CLIAuthExchangeResponse:
        """One exchange: the key when approved; otherwise a SandboxdError whose ``code`` says why
        (CLI_AUTH_PENDING…)."""
        return self._transport.request(
            "POST",
            "/api/cli-auth/exchange",
            json={"device_code": device_code, "code_verifier": code_verifier},
            anonymous=True,
            # A lost answer cannot be asked for again (the key is handed out once): never resend.
            idempotent=False,
        )

    def wait_for_key(
        self,
        *,
        device_code: str,
        code_verifier: str,
        interval: float,
        expires_in: Optional[float] = None,
        on_pending: Optional[Callable[[float, int], None]] = None,
    ) -> CLIAuthExchangeResponse:
        """Polls the exchange every ``interval`` seconds (longer when the server says ``slow_down``) until it
        answers the key, or a final error (denied, expired, used, wrong verifier). ``on_pending(interval, polls)``
        is called before each wait."""
        interval = max(1.0, interval)
        deadline = None if expires_in is None else monotonic() + expires_in
        polls = 0
        while True:
            if on_pending is not None:
                on_pending(interval, polls)
            sleep(interval)
            try:
                return self.exchange(device_code=device_code, code_verifier=code_verifier)
            except SandboxdError as error:
                if error.code == "CLI_AUTH_SLOW_DOWN":
                    slower = error.body.get("interval") if isinstance(error.body, dict) else None
                    interval = float(slower) if isinstance(slower, (int, float)) else interval + 5
                elif error.code != "CLI_AUTH_PENDING":
                    raise
                if deadline is not None and monotonic() + interval > deadline:
                    raise SandboxdError(
                        "the login expired before it was approved; start again", code="CLI_AUTH_EXPIRED"
                    ) from error
            polls += 1
