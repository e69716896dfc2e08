# Generated from sandboxd/_async/resources/snapshots.py by scripts/unasync.py: do not edit.
"""Snapshots of your VMs: list, get, delete, clone (fork one into up to 100 VMs; start one VM from it with
``vms.create(snapshot=…)``), and ``create``: a snapshot built from an OCI image (a template build)."""

from __future__ import annotations

from typing import Dict, List, Optional

from ...models import SnapshotRecord, TemplateRecord
from ...types import SnapshotCloneResult, SnapshotDeleteResult
from ..._http import defined
from ..transport import Transport
from .templates import template_body


class Snapshots:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def create(
        self,
        *,
        name: str,
        oci_image: str,
        git_clone_url: Optional[str] = None,
        git_clone_branch: Optional[str] = None,
        post_build_cmd: Optional[str] = None,
        envs: Optional[Dict[str, str]] = None,
        registry_auth: Optional[Dict[str, str]] = None,
        vcpu_count: Optional[int] = None,
        memory_mb: Optional[int] = None,
    ) -> TemplateRecord:
        """POST /v1/snapshots: the same build as ``templates.create`` (the answer is the template, ``building``;
        follow it with ``templates.wait_until_ready``)."""
        return self._transport.request(
            "POST",
            "/v1/snapshots",
            json=template_body(
                name,
                oci_image,
                git_clone_url,
                git_clone_branch,
                post_build_cmd,
                envs,
                registry_auth,
                vcpu_count,
                memory_mb,
            ),
        )

    def list(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> List[SnapshotRecord]:
        """Your snapshots, newest first."""
        return self._transport.request("GET", "/v1/snapshots", query={"limit": limit, "offset": offset})

    def get(self, snapshot_id: str) -> SnapshotRecord:
        return self._transport.request("GET", "/v1/snapshots/{snapshot_id}", params={"snapshot_id": snapshot_id})

    def delete(self, snapshot_id: str) -> SnapshotDeleteResult:
        """Deletes the snapshot and its files; refused (409) while a VM or another snapshot builds on it."""
        return self._transport.request(
            "DELETE", "/v1/snapshots/{snapshot_id}", params={"snapshot_id": snapshot_id}
        )

    def clone(self, snapshot: str, *, count: Optional[int] = None) -> SnapshotCloneResult:
        """Forks your snapshot (its id or its name) into ``count`` new VMs (1 to 100, default 1; your plan may allow
        fewer in one request), each in a session of its own. All or nothing: if one cannot start, none is left."""
        return self._transport.request(
            "POST", "/v1/snapshots/{snapshot_id}/clone", params={"snapshot_id": snapshot}, json=defined(count=count)
        )
