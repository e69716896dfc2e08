# Generated from sandboxd/_async/resources/terminals.py by scripts/unasync.py: do not edit.
"""Terminals (PTY sessions) in a VM, reached through its session (``session_id=``) or directly (``vm_id=``).

``attach`` opens the terminal's WebSocket (the ``websockets`` library) with the client's credentials in the
handshake's headers, so no key or token goes into a URL.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from ...models import PtySession, PtySessionState
from ..._http import defined, fill_path
from .._terminal import TerminalConnection, OnData
from ..transport import Transport


def _owner(session_id: Optional[str], vm_id: Optional[str]) -> Tuple[str, Dict[str, str]]:
    """The path prefix and its parameter: a session's terminals (its current VM) or a VM's."""
    if (session_id is None) == (vm_id is None):
        raise TypeError("give exactly one of session_id and vm_id")
    if session_id is not None:
        return "/v1/sessions/{session_id}/pty/sessions", {"session_id": session_id}
    return "/v1/vms/{vm_id}/pty/sessions", {"vm_id": vm_id or ""}


class Terminals:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def create(
        self,
        *,
        session_id: Optional[str] = None,
        vm_id: Optional[str] = None,
        cols: int = 80,
        rows: int = 24,
        command: Optional[str] = None,
        shell: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        scrollback_bytes: Optional[int] = None,
    ) -> PtySession:
        """Starts a terminal: an interactive login shell, or ``command`` (the terminal exits with it).

        Of a session (``session_id``: its VM, started if needed) or of a VM (``vm_id``). ``shell``: absolute path
        (default /bin/bash); ``scrollback_bytes``: output replayed to each new attachment (default 64 KiB).
        """
        path, params = _owner(session_id, vm_id)
        body = {
            "cols": cols,
            "rows": rows,
            **defined(command=command, shell=shell, env=env, cwd=cwd, scrollback_bytes=scrollback_bytes),
        }
        if session_id is not None:
            return self._transport.request(
                "POST", "/v1/sessions/{session_id}/pty/sessions", params=params, json=body
            )
        return self._transport.request("POST", "/v1/vms/{vm_id}/pty/sessions", params=params, json=body)

    def list(self, *, session_id: Optional[str] = None, vm_id: Optional[str] = None) -> List[PtySessionState]:
        _, params = _owner(session_id, vm_id)
        if session_id is not None:
            answer = self._transport.request("GET", "/v1/sessions/{session_id}/pty/sessions", params=params)
        else:
            answer = self._transport.request("GET", "/v1/vms/{vm_id}/pty/sessions", params=params)
        return answer["sessions"]

    def get(self, pty_id: str, *, session_id: Optional[str] = None, vm_id: Optional[str] = None) -> PtySession:
        """A terminal's record, with a fresh connect token (for clients that cannot send headers)."""
        _, params = _owner(session_id, vm_id)
        params = {**params, "pty_id": pty_id}
        if session_id is not None:
            return self._transport.request(
                "GET", "/v1/sessions/{session_id}/pty/sessions/{pty_id}", params=params
            )
        return self._transport.request("GET", "/v1/vms/{vm_id}/pty/sessions/{pty_id}", params=params)

    def resize(
        self, pty_id: str, cols: int, rows: int, *, session_id: Optional[str] = None, vm_id: Optional[str] = None
    ) -> PtySessionState:
        _, params = _owner(session_id, vm_id)
        params = {**params, "pty_id": pty_id}
        body = {"cols": cols, "rows": rows}
        if session_id is not None:
            return self._transport.request(
                "POST", "/v1/sessions/{session_id}/pty/sessions/{pty_id}/resize", params=params, json=body
            )
        return self._transport.request(
            "POST", "/v1/vms/{vm_id}/pty/sessions/{pty_id}/resize", params=params, json=body
        )

    def delete(
        self, pty_id: str, *, session_id: Optional[str] = None, vm_id: Optional[str] = None
    ) -> PtySessionState:
        """Hangs the terminal up (SIGHUP, then SIGKILL) and forgets it; answers its final state."""
        _, params = _owner(session_id, vm_id)
        params = {**params, "pty_id": pty_id}
        if session_id is not None:
            return self._transport.request(
                "DELETE", "/v1/sessions/{session_id}/pty/sessions/{pty_id}", params=params
            )
        return self._transport.request("DELETE", "/v1/vms/{vm_id}/pty/sessions/{pty_id}", params=params)

    def attach(
        self,
        pty_id: str,
        *,
        session_id: Optional[str] = None,
        vm_id: Optional[str] = None,
        on_data: Optional[OnData] = None,
    ) -> TerminalConnection:
        """Attaches over a WebSocket (``GET …/pty/sessions/{pty_id}/connect``): output (the scrollback first, then
        live) to ``on_data`` or through the connection's ``recv``/``read_until``; input and resizes through it."""
        prefix, params = _owner(session_id, vm_id)
        path = fill_path(prefix + "/{pty_id}/connect", {**params, "pty_id": pty_id})
        return TerminalConnection.connect(self._transport.settings, path, pty_id, on_data)
