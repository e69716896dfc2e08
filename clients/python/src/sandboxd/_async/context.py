"""What a session handle uses of its client: the calls it makes for its own session (``AsyncSandboxd`` has them).

A Protocol, so that ``session.py`` and ``resources/sessions.py`` need not import the client that builds them (the
client imports both).
"""

from __future__ import annotations

from typing import Optional, Protocol

from ..models import SessionStatus, SessionUsage
from ..types import AppUrl, ExecuteResult, KillResult, Language, SessionDetails
from .resources.execution import DEFAULT_EXECUTE_TIMEOUT_SECONDS
from .resources.contexts import Contexts
from .resources.executions import AsyncExecutionRun, Executions
from .resources.files import Files
from .resources.processes import Processes
from .resources.terminals import Terminals
from ._streams import OnOutput


class SessionCalls(Protocol):
    """The calls on a session by id (``client.sessions``) that its handle forwards."""

    async def status(self, session_id: str) -> SessionStatus:
        ...

    async def info(self, session_id: str) -> SessionDetails:
        ...

    async def usage(self, session_id: str) -> SessionUsage:
        ...

    async def kill(self, session_id: str) -> KillResult:
        ...

    async def app_url(self, session_id: str, port: int = 80) -> AppUrl:
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

    async def execute(
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

    async def execute_async(
        self,
        code: str,
        *,
        session_id: Optional[str] = None,
        language: Language = "python",
        timeout: float = DEFAULT_EXECUTE_TIMEOUT_SECONDS,
        context_id: Optional[str] = None,
    ) -> AsyncExecutionRun:
        ...
