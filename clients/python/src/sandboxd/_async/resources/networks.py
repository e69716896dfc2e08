"""Private networks between your VMs: create, list, get, delete, add and remove members (join at create with
``vms.create(networks=…)``). Members reach each other over TCP at their addresses and at
``<vm name>.<network>.internal``."""

from __future__ import annotations

from typing import List

from ...models import NetworkMemberRecord, NetworkRecord
from ..transport import AsyncTransport


class Networks:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(self, *, name: str) -> NetworkRecord:
        """A network (a /24 of virtual addresses); ``name`` is a DNS label."""
        return await self._transport.request("POST", "/v1/networks", json={"name": name})

    async def list(self) -> List[NetworkRecord]:
        """Your networks, oldest first, with their members."""
        return await self._transport.request("GET", "/v1/networks")

    async def get(self, network: str) -> NetworkRecord:
        """A network by id or name."""
        return await self._transport.request("GET", "/v1/networks/{network_id}", params={"network_id": network})

    async def delete(self, network: str) -> None:
        """Deletes the network (a 409 while it has members)."""
        await self._transport.request("DELETE", "/v1/networks/{network_id}", params={"network_id": network})

    async def add_member(self, network: str, vm_id: str) -> NetworkMemberRecord:
        """Adds a running or paused VM to the network (its session's next VMs join too)."""
        return await self._transport.request(
            "POST", "/v1/networks/{network_id}/members", params={"network_id": network}, json={"vm_id": vm_id}
        )

    async def remove_member(self, network: str, vm_id: str) -> None:
        """Removes a VM from the network."""
        await self._transport.request(
            "DELETE", "/v1/networks/{network_id}/members/{vm_id}", params={"network_id": network, "vm_id": vm_id}
        )
