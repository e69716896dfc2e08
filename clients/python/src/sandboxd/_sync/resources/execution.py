# Generated from sandboxd/_async/resources/execution.py by scripts/unasync.py: do not edit.
"""POST /execute and /v1/execute_async: run code or a command in a session's VM."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ...errors import ExecutionError
from ...types import ExecuteResult, Language
from ..transport import Transport
from .executions import ExecutionRun, Executions

#: The spec's default wait of a client library for execute, in seconds.
DEFAULT_EXECUTE_TIMEOUT_SECONDS = 15.0
#: Extra seconds the HTTP call allows beyond the server-side wait, for starting a VM and the answer.
HTTP_MARGIN_SECONDS = 60.0


def execute_body(
    code: str, session_id: Optional[str], language: Language, timeout: float, context_id: Optional[str] = None
) -> Dict[str, Any]:
    body: Dict[str, Any] = {"command": code} if language == "bash" else {"code": code}
    body.update({"language": language, "session_id": session_id, "timeout": timeout})
    if context_id is not None:
        body["context_id"] = context_id
    return body


def checked(result: ExecuteResult, raise_on_error: bool) -> ExecuteResult:
    """Raises ExecutionError for a failed result, when asked to."""
    if not raise_on_error or (result["status"] == "completed" and result["exit_code"] in (0, None)):
        return result
    lines = result["stderr"].strip().split("\n")
    last = lines[-1] if lines and lines[-1] else ""
    raise ExecutionError(
        f"execution {result['execution_id']} {result['status']} with exit code {result['exit_code']}"
        + (f": {last}" if last else ""),
        execution_id=result["execution_id"],
        session_id=result["session_id"],
        exit_code=result["exit_code"],
        stdout=result["stdout"],
        stderr=result["stderr"],
    )


class Execution:
    def __init__(self, transport: Transport, executions: Executions) -> None:
        self._transport = transport
        self._executions = executions

    def execute(
        self,
        code: str,
        session_id: Optional[str],
        language: Language,
        timeout: float,
        raise_on_error: bool,
        context_id: Optional[str] = None,
    ) -> ExecuteResult:
        """Runs and waits (never retried once sent: the code may have run). ``session_id`` None: a new session;
        ``context_id`` None: the session's default Python context."""
        result = self._transport.request(
            "POST",
            "/execute",
            json=execute_body(code, session_id, language, timeout, context_id),
            kind="execute",
            idempotent=False,
            timeout=max(self._transport.settings.timeout, timeout + HTTP_MARGIN_SECONDS),
        )
        return checked(result, raise_on_error)

    def execute_async(
        self,
        code: str,
        session_id: Optional[str],
        language: Language,
        timeout: float,
        context_id: Optional[str] = None,
    ) -> ExecutionRun:
        """Starts a run and returns at once; ``wait()`` on the answer polls its record."""
        started = self._transport.request(
            "POST",
            "/v1/execute_async",
            json=execute_body(code, session_id, language, timeout, context_id),
            kind="execute",
            idempotent=False,
        )
        return ExecutionRun(self._executions, started["task_id"], started["session_id"])
