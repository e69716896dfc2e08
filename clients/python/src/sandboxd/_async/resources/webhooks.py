"""Webhook endpoints and their deliveries."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from ...models import WebhookDelivery, WebhookDeliveryList, WebhookEndpoint, WebhookSecretRotation
from ...types import WebhookDeliveryDetails, WebhookEndpointDeleteResult, WebhookVerification
from ..._http import MISSING
from ..transport import AsyncTransport


class WebhookEndpoints:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(
        self,
        *,
        url: str,
        event_patterns: Sequence[str],
        description: Optional[str] = None,
        enabled: Optional[bool] = None,
    ) -> WebhookEndpoint:
        """Registers an endpoint for events matching ``event_patterns`` (``["vm.*", "*.failed"]``); the answer's
        ``secret`` (whsec_…) is shown this once."""
        body: Dict[str, Any] = {"url": url, "event_patterns": list(event_patterns)}
        if description is not None:
            body["description"] = description
        if enabled is not None:
            body["enabled"] = enabled
        return await self._transport.request("POST", "/v1/webhooks/endpoints", json=body)

    async def list(self) -> List[WebhookEndpoint]:
        return await self._transport.request("GET", "/v1/webhooks/endpoints")

    async def get(self, endpoint_id: str) -> WebhookEndpoint:
        return await self._transport.request(
            "GET", "/v1/webhooks/endpoints/{endpoint_id}", params={"endpoint_id": endpoint_id}
        )

    async def update(
        self,
        endpoint_id: str,
        *,
        url: str = MISSING,
        event_patterns: Sequence[str] = MISSING,
        description: Optional[str] = MISSING,
        enabled: bool = MISSING,
    ) -> WebhookEndpoint:
        """Changes what is given; the rest is kept."""
        changes: Dict[str, Any] = {
            "url": url,
            "event_patterns": event_patterns,
            "description": description,
            "enabled": enabled,
        }
        body = {k: (list(v) if k == "event_patterns" else v) for k, v in changes.items() if v is not MISSING}
        return await self._transport.request(
            "PATCH", "/v1/webhooks/endpoints/{endpoint_id}", params={"endpoint_id": endpoint_id}, json=body
        )

    async def delete(self, endpoint_id: str) -> WebhookEndpointDeleteResult:
        return await self._transport.request(
            "DELETE", "/v1/webhooks/endpoints/{endpoint_id}", params={"endpoint_id": endpoint_id}
        )

    async def test(self, endpoint_id: str) -> WebhookDelivery:
        """Sends a ``webhook.test`` event; answers the delivery after its first attempt."""
        return await self._transport.request(
            "POST", "/v1/webhooks/endpoints/{endpoint_id}/test", params={"endpoint_id": endpoint_id}
        )

    async def rotate_secret(self, endpoint_id: str) -> WebhookSecretRotation:
        return await self._transport.request(
            "POST", "/v1/webhooks/endpoints/{endpoint_id}/rotate-secret", params={"endpoint_id": endpoint_id}
        )

    async def verify(self, endpoint_id: str) -> WebhookVerification:
        """Sends a signed challenge and says whether the receiver accepted it."""
        return await self._transport.request(
            "POST", "/v1/webhooks/endpoints/{endpoint_id}/verify", params={"endpoint_id": endpoint_id}
        )


class WebhookDeliveries:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def list(
        self,
        *,
        endpoint_id: Optional[str] = None,
        status: Optional[str] = None,
        event_type: Optional[str] = None,
        cursor: Optional[str] = None,
        limit: Optional[int] = None,
    ) -> WebhookDeliveryList:
        """A page of deliveries, newest first; pass ``next_cursor`` back as ``cursor`` for the next page."""
        return await self._transport.request(
            "GET",
            "/v1/webhooks/deliveries",
            query={
                "endpoint_id": endpoint_id,
                "status": status,
                "event_type": event_type,
                "cursor": cursor,
                "limit": limit,
            },
        )

    async def get(self, delivery_id: str) -> WebhookDeliveryDetails:
        """One delivery with every attempt."""
        return await self._transport.request(
            "GET", "/v1/webhooks/deliveries/{delivery_id}", params={"delivery_id": delivery_id}
        )

    async def replay(self, delivery_id: str) -> WebhookDelivery:
        return await self._transport.request(
            "POST", "/v1/webhooks/deliveries/{delivery_id}/replay", params={"delivery_id": delivery_id}
        )


class Webhooks:
    def __init__(self, transport: AsyncTransport) -> None:
        self.endpoints = WebhookEndpoints(transport)
        self.deliveries = WebhookDeliveries(transport)
