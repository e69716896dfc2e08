# Generated from sandboxd/_async/context.py by scripts/unasync.py: do not edit.
"""What a session handle uses of its client: the calls it makes for its own session (``Sandboxd`` has them).

A Protocol, so that ``session.py`` and ``resources/sessions.py`` need not import the client that builds them (the
client imports both).
"""

from __future__ import annotations

from typing import Optional, Protocol

from ..models import SessionStatus, SessionUsage
from ..types import AppUrl, ExecuteResult, KillResult, Language, SessionDetails
from .resources.execution import DEFAULT_EXECUTE_TIMEOUT_SECONDS
from .resources.contexts import Contexts
from .resources.executions import ExecutionRun, Executions
from .resources.files import Files
from .resources.processes import Processes
from .resources.terminals import Terminals
from ._streams import OnOutput


class SessionCalls(Protocol):
    """The calls on a session by id (``client.sessions``) that its handle forwards."""

    def status(self, session_id: str) -> SessionStatus:
        ...

    def info(self, session_id: str) -> SessionDetails:
        ...

    def usage(self, session_id: str) -> SessionUsage:
        ...

    def kill(self, session_id: str) -> KillResult:
        ...

    def app_url(self, session_id: str, port: int = 80) -> AppUrl:
        ...


class SessionClient(Protocol):
    """The client as a session handle sees it."""

    contexts: Contexts
    executions: Executions
    files: Files
    processes: Processes
    terminals: Terminals

    @property
    def sessions(self) -> SessionCalls:
        ...

    def execute(
        self,
        code: str,
        *,
        session_id: Optional[str] = None,
        language: Language = "python",
        timeout: float = DEFAULT_EXECUTE_TIMEOUT_SECONDS,
        raise_on_error: bool = False,
        context_id: Optional[str] = None,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
    ) -> ExecuteResult:
        ...

    def execute_async(
        self,
        code: str,
        *,
        session_id: Optional[str] = None,
        language: Language = "python",
        timeout: float = DEFAULT_EXECUTE_TIMEOUT_SECONDS,
        context_id: Optional[str] = None,
    ) -> ExecutionRun:
        ...
