# Generated from sandboxd/_async/resources/custom_domains.py by scripts/unasync.py: do not edit.
"""Custom domains: serve a share, a port of a session or a deployed app at your own domain, proven by a DNS TXT record."""

from __future__ import annotations

from typing import List, Optional

from ...models import CustomDomain, CustomDomainTlsCheck
from ..._http import defined
from ..transport import Transport


class CustomDomains:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def create(
        self,
        *,
        domain: str,
        share_id: Optional[str] = None,
        session_id: Optional[str] = None,
        port: Optional[int] = None,
        app_id: Optional[str] = None,
        dns_provider: str = "manual",
    ) -> CustomDomain:
        """Claims a domain for a share (``share_id``), a session's port (``session_id`` and ``port``, served to
        you only), or a deployed app (``app_id``: its id or name, served like the app's own URL). The answer's
        ``verification`` is the TXT record to create; then ``verify``, or let the server's background check find
        it."""
        body = {
            "domain": domain,
            **defined(share_id=share_id, session_id=session_id, port=port, app_id=app_id),
            "dns_provider": dns_provider,
        }
        return self._transport.request("POST", "/v1/custom-domains", json=body)

    def list(self) -> List[CustomDomain]:
        """Your custom domains, newest first."""
        answer = self._transport.request("GET", "/v1/custom-domains")
        return answer["custom_domains"]

    def get(self, domain_id: str) -> CustomDomain:
        return self._transport.request("GET", "/v1/custom-domains/{domain_id}", params={"domain_id": domain_id})

    def verify(self, domain_id: str) -> CustomDomain:
        """Checks the TXT record now: ``verified``, or still ``pending`` with what was wrong in ``last_error``."""
        return self._transport.request(
            "POST", "/v1/custom-domains/{domain_id}/verify", params={"domain_id": domain_id}
        )

    def delete(self, domain_id: str) -> CustomDomain:
        """Deletes the claim; a verified domain stops being served at once. Answers the claim as it was."""
        return self._transport.request(
            "DELETE", "/v1/custom-domains/{domain_id}", params={"domain_id": domain_id}
        )

    def tls_check(self, domain: str) -> CustomDomainTlsCheck:
        """Whether sandboxd serves ``domain`` (the question a TLS proxy asks before getting a certificate)."""
        return self._transport.request("GET", "/v1/custom-domains/tls-check", query={"domain": domain})
