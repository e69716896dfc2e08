"""Persistent volumes: create, list, get, delete (mount them with ``vms.create(volumes=…)``)."""

from __future__ import annotations

from typing import Dict, List, Optional

from ...models import VolumeRecord
from ..transport import AsyncTransport


class Volumes:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(self, *, name: str, size_gb: Optional[int] = None, size_mb: Optional[int] = None) -> VolumeRecord:
        """A volume of ``size_gb`` GiB or ``size_mb`` MiB (give exactly one)."""
        if (size_gb is None) == (size_mb is None):
            raise TypeError("give exactly one of size_gb and size_mb")
        size: Dict[str, Optional[int]] = {"size_gb": size_gb} if size_gb is not None else {"size_mb": size_mb}
        return await self._transport.request("POST", "/v1/volumes", json={"name": name, **size})

    async def list(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> List[VolumeRecord]:
        """Your volumes, newest first, each with the VMs that have it mounted."""
        return await self._transport.request("GET", "/v1/volumes", query={"limit": limit, "offset": offset})

    async def get(self, volume_id: str) -> VolumeRecord:
        return await self._transport.request("GET", "/v1/volumes/{volume_id}", params={"volume_id": volume_id})

    async def delete(self, volume_id: str) -> None:
        """Deletes the volume and its data (a 409 while a VM has it mounted)."""
        await self._transport.request("DELETE", "/v1/volumes/{volume_id}", params={"volume_id": volume_id})
