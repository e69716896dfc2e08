# Generated from sandboxd/_async/resources/contexts.py by scripts/unasync.py: do not edit.
"""/v1/sessions/{id}/contexts...: a session's Python contexts (E2B's code contexts). Each is an interpreter of its own
in the session's VM, with variables and imports of its own; run code in one with ``execute(code,
context_id=...)``. Every session has its ``default`` context (what an execute without ``context_id`` uses).
"""

from __future__ import annotations

from typing import List, Optional

from ...models import ContextInfo
from ..._http import defined
from ..transport import Transport


class Contexts:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def create(self, session_id: str, *, cwd: Optional[str] = None) -> ContextInfo:
        """Makes a context in the session (``id``: ``ctx_…``); its interpreter starts in ``cwd`` (default /root)
        with its first run. At most 16 per session besides ``default``: QuotaExceededError past that."""
        # Not idempotent: a retry after a create that went through would make two contexts.
        return self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/contexts",
            params={"session_id": session_id},
            json=defined(cwd=cwd),
            kind="session",
        )

    def list(self, session_id: str) -> List[ContextInfo]:
        """The session's contexts: ``default`` first, then the ones made, oldest first."""
        answer = self._transport.request(
            "GET", "/v1/sessions/{session_id}/contexts", params={"session_id": session_id}, kind="session"
        )
        return answer["contexts"]

    def get(self, session_id: str, context_id: str) -> ContextInfo:
        """One context of the session (``default`` too). Not there: NotFoundError."""
        return self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/contexts/{context_id}",
            params={"session_id": session_id, "context_id": context_id},
        )

    def restart(self, session_id: str, context_id: str) -> ContextInfo:
        """Ends the context's interpreter: its variables and imports are gone, and its next run starts afresh (in
        its ``cwd``). Works on ``default`` too; other contexts and the VM go on."""
        return self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/contexts/{context_id}/restart",
            params={"session_id": session_id, "context_id": context_id},
        )

    def delete(self, session_id: str, context_id: str) -> None:
        """Deletes a context you made and ends its interpreter. ``default`` cannot be deleted (SandboxdError 409:
        restart it instead)."""
        self._transport.request(
            "DELETE",
            "/v1/sessions/{session_id}/contexts/{context_id}",
            params={"session_id": session_id, "context_id": context_id},
        )
