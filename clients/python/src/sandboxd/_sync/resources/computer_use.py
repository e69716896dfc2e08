# Generated from sandboxd/_async/resources/computer_use.py by scripts/unasync.py: do not edit.
"""Computer use: a desktop session (an X desktop with VNC in its own VM) driven by the actions AI agents use,
watched or taken over in a browser, and recorded.

    desktop = client.computer_use.create(screen_width=1280, screen_height=800)
    desktop.click(640, 400)
    desktop.type("echo hello\\n")
    png = desktop.screenshot()                       # PNG bytes
    viewer = (desktop.viewer_url())["viewer_url"]    # open in a browser (noVNC)

Every action goes through ``POST /v1/computeruse/{session_id}/action`` with Anthropic's computer-use tool input,
so ``desktop.action(tool_use.input)`` runs what a model asked for as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple

from ...errors import SandboxdError
from ...types import SavedRecording, ViewerUrl
from ..._http import MISSING, defined, fill_path
from .._backend import monotonic, sleep
from ..transport import Transport

if TYPE_CHECKING:
    from ..session import Session
    from .sessions import Sessions

Point = Tuple[int, int]


class ComputerUse:
    def __init__(self, transport: Transport, sessions: "Sessions") -> None:
        self._transport = transport
        self._sessions = sessions

    def create(
        self,
        *,
        screen_width: Optional[int] = None,
        screen_height: Optional[int] = None,
        vm_lifetime_seconds: Optional[int] = None,
        metadata: Optional[Dict[str, str]] = None,
        env: Optional[Dict[str, str]] = None,
        prewarm: bool = True,
    ) -> "Desktop":
        """A new desktop session (template ``desktop``); its VM starts now, in the background.
        ``screen_width``: 320 to 3840 (default 1280); ``screen_height``: 320 to 2160 (default 800)."""
        info = self._transport.request(
            "POST",
            "/v1/sessions/session",
            json={
                "template": "desktop",
                "prewarm": prewarm,
                **defined(
                    screen_width=screen_width,
                    screen_height=screen_height,
                    vm_lifetime_seconds=vm_lifetime_seconds,
                    metadata=metadata,
                    env=env,
                ),
            },
        )
        return Desktop(self, info["session_id"])

    def connect(self, session_id: str) -> "Desktop":
        """A Desktop object for an existing desktop session (no request is made)."""
        return Desktop(self, session_id)

    def session(self, session_id: str) -> "Session":
        """The session itself (execute, files, kill…): a desktop session is a session."""
        return self._sessions.connect(session_id)

    def request(self, session_id: str, method: str, rest: str, json: Any = MISSING) -> Any:
        """Any request to the in-VM computer-use API (``/v1/computeruse/{session_id}/{rest}``, JSON answer)."""
        return self._transport.request(
            method,
            _proxy_path(session_id, rest),
            kind="session",
            json=json,
            idempotent=method.upper() == "GET",
        )

    def action(self, session_id: str, input: Mapping[str, Any]) -> Dict[str, Any]:
        """Runs one action as Anthropic's computer-use tool describes it (``{"action": "left_click",
        "coordinate": [x, y]}``…)."""
        return self.request(session_id, "POST", "action", dict(input))

    def screenshot(
        self,
        session_id: str,
        *,
        scale: Optional[float] = None,
        width: Optional[int] = None,
        height: Optional[int] = None,
    ) -> bytes:
        """The screen as PNG bytes (``scale`` 0.05 to 1, or fit into ``width``/``height``)."""
        return self._transport.request(
            "GET",
            _proxy_path(session_id, "screenshot"),
            query={"scale": scale, "width": width, "height": height},
            kind="session",
            headers={"accept": "image/png"},
            response_type="bytes",
        )

    def viewer_url(self, session_id: str, *, view_only: bool = False) -> ViewerUrl:
        return self._transport.request(
            "GET",
            "/v1/computeruse/{session_id}/viewer-url",
            params={"session_id": session_id},
            query={"view_only": view_only},
            kind="session",
        )

    def recordings(self, session_id: str) -> List[SavedRecording]:
        """Saved recordings of the session, newest first."""
        answer = self._transport.request(
            "GET", "/v1/sessions/{session_id}/recordings", params={"session_id": session_id}, kind="session"
        )
        return answer["recordings"]

    def recording(self, session_id: str, recording_id: str) -> SavedRecording:
        return self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/recordings/{recording_id}",
            params={"session_id": session_id, "recording_id": recording_id},
            kind="session",
        )

    def download_recording(self, session_id: str, recording_id: str) -> bytes:
        """A saved recording's MP4 bytes."""
        return self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/recordings/{recording_id}/download",
            params={"session_id": session_id, "recording_id": recording_id},
            kind="session",
            headers={"accept": "video/mp4"},
            response_type="bytes",
        )

    def delete_recording(self, session_id: str, recording_id: str) -> SavedRecording:
        return self._transport.request(
            "DELETE",
            "/v1/sessions/{session_id}/recordings/{recording_id}",
            params={"session_id": session_id, "recording_id": recording_id},
            kind="session",
        )

    def wait_for_recording(
        self, session_id: str, recording_id: str, *, timeout: float = 120.0, interval: float = 0.5
    ) -> SavedRecording:
        """Waits until a stopped recording is saved (or failed), polling every ``interval`` seconds."""
        deadline = monotonic() + timeout
        while True:
            saved = [r for r in self.recordings(session_id) if r["recording_id"] == recording_id]
            if saved and saved[0]["status"] != "saving":
                return saved[0]
            if monotonic() > deadline:
                raise SandboxdError(f"recording {recording_id} was not saved within {timeout} s")
            sleep(interval)


def _proxy_path(session_id: str, rest: str) -> str:
    """``/v1/computeruse/{session_id}/{rest}``: the authenticated proxy to the in-VM computer-use API."""
    return fill_path("/v1/computeruse/{session_id}/", {"session_id": session_id}) + rest.lstrip("/")


class Desktop:
    """One desktop session's actions, bound to its id."""

    def __init__(self, computer_use: ComputerUse, session_id: str) -> None:
        self._computer_use = computer_use
        self.session_id = session_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}(session_id={self.session_id!r})"

    def action(self, input: Mapping[str, Any]) -> Dict[str, Any]:
        return self._computer_use.action(self.session_id, input)

    def screenshot(
        self, *, scale: Optional[float] = None, width: Optional[int] = None, height: Optional[int] = None
    ) -> bytes:
        return self._computer_use.screenshot(self.session_id, scale=scale, width=width, height=height)

    def move_mouse(self, x: int, y: int) -> Dict[str, Any]:
        return self.action({"action": "mouse_move", "coordinate": [x, y]})

    def click(
        self,
        x: Optional[int] = None,
        y: Optional[int] = None,
        *,
        button: str = "left",
        count: int = 1,
        modifiers: Optional[str] = None,
    ) -> Dict[str, Any]:
        """A click at (x, y) (or where the pointer is): left by default, ``count`` 2 or 3 for double and triple."""
        if button == "right":
            action = "right_click"
        elif button == "middle":
            action = "middle_click"
        else:
            action = {1: "left_click", 2: "double_click", 3: "triple_click"}[count]
        body: Dict[str, Any] = {"action": action}
        if x is not None and y is not None:
            body["coordinate"] = [x, y]
        if modifiers:
            body["text"] = modifiers
        return self.action(body)

    def drag(self, start: Point, end: Point) -> Dict[str, Any]:
        return self.action(
            {"action": "left_click_drag", "start_coordinate": list(start), "coordinate": list(end)}
        )

    def mouse_down(self, x: Optional[int] = None, y: Optional[int] = None) -> Dict[str, Any]:
        return self.action({"action": "left_mouse_down", **({"coordinate": [x, y]} if x is not None else {})})

    def mouse_up(self, x: Optional[int] = None, y: Optional[int] = None) -> Dict[str, Any]:
        return self.action({"action": "left_mouse_up", **({"coordinate": [x, y]} if x is not None else {})})

    def scroll(self, direction: str, amount: int = 3, at: Optional[Point] = None) -> Dict[str, Any]:
        body: Dict[str, Any] = {"action": "scroll", "scroll_direction": direction, "scroll_amount": amount}
        if at is not None:
            body["coordinate"] = list(at)
        return self.action(body)

    def type(self, text: str) -> Dict[str, Any]:
        """Types text as key presses ("\\n" presses Return)."""
        return self.action({"action": "type", "text": text})

    def key(self, keys: str) -> Dict[str, Any]:
        """Presses keys: X keysym names, combinations like ``ctrl+s``, several separated by spaces."""
        return self.action({"action": "key", "text": keys})

    def hold_key(self, keys: str, seconds: float) -> Dict[str, Any]:
        return self.action({"action": "hold_key", "text": keys, "duration": seconds})

    def cursor_position(self) -> Dict[str, int]:
        return (self.action({"action": "cursor_position"}))["cursor"]

    def wait(self, seconds: float) -> Dict[str, Any]:
        return self.action({"action": "wait", "duration": seconds})

    def display(self) -> Dict[str, int]:
        return self._computer_use.request(self.session_id, "GET", "display")

    def resize(self, width: int, height: int) -> Dict[str, int]:
        return self._computer_use.request(self.session_id, "PUT", "display", {"width": width, "height": height})

    def windows(self) -> List[Dict[str, Any]]:
        return (self._computer_use.request(self.session_id, "GET", "windows"))["windows"]

    def viewer_url(self, *, view_only: bool = False) -> ViewerUrl:
        return self._computer_use.viewer_url(self.session_id, view_only=view_only)

    def start_recording(self, *, framerate: Optional[int] = None) -> Dict[str, Any]:
        return self._computer_use.request(
            self.session_id, "POST", "recording/start", {"framerate": framerate} if framerate is not None else {}
        )

    def stop_recording(self) -> Dict[str, Any]:
        """Stops the recording; the server then saves it (see ``recordings()``, ``wait_for_recording()``)."""
        return self._computer_use.request(self.session_id, "POST", "recording/stop")

    def recordings(self) -> List[SavedRecording]:
        return self._computer_use.recordings(self.session_id)

    def wait_for_recording(
        self, recording_id: str, *, timeout: float = 120.0, interval: float = 0.5
    ) -> SavedRecording:
        return self._computer_use.wait_for_recording(
            self.session_id, recording_id, timeout=timeout, interval=interval
        )

    def download_recording(self, recording_id: str) -> bytes:
        return self._computer_use.download_recording(self.session_id, recording_id)
