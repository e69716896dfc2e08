"""VMs: start one (from the built-in image, a template or a snapshot, with volumes), list, get, kill,
snapshot, clone, pause, resume."""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence

from ...models import EgressPolicyInput, LifecycleHooks, SnapshotRecord, VmRecord
from ...types import CloneResult, VmDeleteResult, VmPauseResult
from ..._http import defined
from ..transport import AsyncTransport


def _volume(mount: Mapping[str, Any]) -> Dict[str, Any]:
    return {
        "volume_id": mount["volume_id"],
        "mount_path": mount["mount_path"],
        "read_only": bool(mount.get("read_only", False)),
    }


class Vms:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(
        self,
        *,
        session_id: Optional[str] = None,
        snapshot: Optional[str] = None,
        template: Optional[str] = None,
        vcpu_count: Optional[int] = None,
        memory_mb: Optional[int] = None,
        vm_lifetime_seconds: Optional[int] = None,
        name: Optional[str] = None,
        metadata: Optional[Dict[str, str]] = None,
        wait: bool = True,
        volumes: Optional[Sequence[Mapping[str, Any]]] = None,
        lifecycle_hooks: Optional[LifecycleHooks] = None,
        egress_policy: Optional[EgressPolicyInput] = None,
        vault_ids: Optional[List[str]] = None,
        networks: Optional[List[str]] = None,
        auto_pause: Optional[int] = None,
        on_expiry: Optional[str] = None,
    ) -> VmRecord:
        """Starts a VM (defaults: the session's settings, or the server's for a new session).

        ``session_id``: a session of yours with no running VM (default: a new session); ``snapshot``/``template``:
        start from your snapshot or template of this name; ``wait=False``: answer at once with the VM
        ``starting``; ``volumes``: ``[{"volume_id", "mount_path", "read_only"}]`` (at most 4; they become the
        session's; a snapshot or clone unmounts them for its moment, a pause keeps them mounted);
        ``lifecycle_hooks``: ``{"pre_stop": {"command": "sync", "timeout_seconds": 10}}`` runs the command in the VM before it is killed, paused or reaches the end of its
        lifetime (default: the session's hooks; its output is an execution record with ``trigger`` ``pre_stop``);
        ``vault_ids``: your vaults to attach to its session (added to those it has; see ``client.vaults``);
        ``networks``: your private networks (names or ids) it joins at start, as do the session's next VMs
        (see ``client.networks``);
        ``auto_pause`` (seconds of idleness, 10 to 2592000) and ``on_expiry`` (``"kill"`` or ``"pause"``): default
        the session's.
        """
        return await self._transport.request(
            "POST",
            "/v1/vms",
            query={"wait": False} if not wait else None,
            json=defined(
                session_id=session_id,
                snapshot=snapshot,
                template=template,
                vcpu_count=vcpu_count,
                memory_mb=memory_mb,
                vm_lifetime_seconds=vm_lifetime_seconds,
                name=name,
                metadata=metadata,
                volumes=[_volume(v) for v in volumes] if volumes else None,
                lifecycle_hooks=lifecycle_hooks,
                egress_policy=egress_policy,
                vault_ids=vault_ids,
                networks=networks,
                auto_pause=auto_pause,
                on_expiry=on_expiry,
            ),
        )

    async def list(self, *, status: Optional[str] = None, limit: Optional[int] = None) -> List[VmRecord]:
        return await self._transport.request("GET", "/v1/vms", query={"status": status, "limit": limit})

    async def get(self, vm_id: str) -> VmRecord:
        return await self._transport.request("GET", "/v1/vms/{vm_id}", params={"vm_id": vm_id})

    async def delete(self, vm_id: str) -> VmDeleteResult:
        """Kills the VM (a paused one's saved state goes too)."""
        return await self._transport.request("DELETE", "/v1/vms/{vm_id}", params={"vm_id": vm_id})

    async def snapshot(self, vm_id: str, *, name: str, metadata: Optional[Dict[str, str]] = None) -> SnapshotRecord:
        """Snapshots the running VM (memory, processes, disk); it runs on. Start VMs from it by name."""
        return await self._transport.request(
            "POST", "/v1/vms/{vm_id}/snapshot", params={"vm_id": vm_id}, json=defined(name=name, metadata=metadata)
        )

    async def clone(
        self, vm_id: str, *, snapshot_name: Optional[str] = None, count: Optional[int] = None
    ) -> CloneResult:
        """Forks the VM into ``count`` new VMs (1 to 100, default 1; your plan may allow fewer in one request), each
        in a session of its own, from your snapshot ``snapshot_name`` or, without it, from the VM's current state (a
        snapshot is taken for it and returned). All or nothing: if one cannot start, none is left."""
        return await self._transport.request(
            "POST",
            "/v1/vms/{vm_id}/clone",
            params={"vm_id": vm_id},
            json=defined(snapshot_name=snapshot_name, count=count),
        )

    async def pause(self, vm_id: str) -> VmPauseResult:
        """Pauses the running VM: its state goes to disk, it holds no memory or CPU, its lifetime stops counting."""
        return await self._transport.request("POST", "/v1/vms/{vm_id}/pause", params={"vm_id": vm_id})

    async def resume(self, vm_id: str) -> VmRecord:
        """Resumes a paused VM: the same machine, as it was (its session's next use resumes it too)."""
        return await self._transport.request("POST", "/v1/vms/{vm_id}/resume", params={"vm_id": vm_id})

    async def set_lifetime(self, vm_id: str, lifetime_seconds: int) -> VmRecord:
        """The VM now ends ``lifetime_seconds`` from now, sooner or later than it would have (a paused VM: that
        much lifetime left once it resumes). Answers the VM's record with its new ``expires_at``."""
        return await self._transport.request(
            "POST", "/v1/vms/{vm_id}/lifetime", params={"vm_id": vm_id}, json={"lifetime_seconds": lifetime_seconds}
        )
