"""POST /execute and /v1/execute_async: run code or a command in a session's VM."""

from __future__ import annotations

from typing import Any, Dict, Optional

from ... import models
from ..._lines import NDJSON
from ..._model import convert
from ...errors import ExecutionError, NetworkError, SandboxdError, error_for
from ...types import ExecuteResult, Language
from .._streams import AsyncRunEventStream, OnOutput, deliver
from ..transport import AsyncTransport
from .executions import AsyncExecutionRun, Executions

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


def run_failure(event: Dict[str, Any], operation: str, request_id: Optional[str]) -> SandboxdError:
    """The error a streamed execute's ``timeout`` or ``error`` event stands for: what the plain call's 408
    EXECUTION_TIMEOUT or error answer raises (the same table, the same facts)."""
    timed_out = event["type"] == "timeout"
    status = 408 if timed_out else event.get("status")
    status = status if isinstance(status, int) else 500
    code = "EXECUTION_TIMEOUT" if timed_out else event.get("code")
    facts = {key: event[key] for key in ("execution_id", "session_id") if event.get(key) is not None}
    detail = event.get("detail")
    return error_for(
        status,
        code if isinstance(code, str) else None,
        "execute",
        detail if isinstance(detail, str) else f"{operation}: {event['type']}",
        facts=facts,
        body=event,
        operation=operation,
        request_id=request_id,
    )


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
    def __init__(self, transport: AsyncTransport, executions: Executions) -> None:
        self._transport = transport
        self._executions = executions

    async def execute(
        self,
        code: str,
        session_id: Optional[str],
        language: Language,
        timeout: float,
        raise_on_error: bool,
        context_id: Optional[str] = None,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
    ) -> ExecuteResult:
        """Runs and waits (never retried once sent: the code may have run). ``session_id`` None: a new session;
        ``context_id`` None: the session's default Python context. ``on_stdout``/``on_stderr``: the run is
        streamed, its output handed to them as it is written."""
        if on_stdout is not None or on_stderr is not None:
            body = execute_body(code, session_id, language, timeout, context_id)
            return checked(await self._execute_streamed(body, timeout, on_stdout, on_stderr), raise_on_error)
        result = await self._transport.request(
            "POST",
            "/execute",
            json=execute_body(code, session_id, language, timeout, context_id),
            kind="execute",
            idempotent=False,
            timeout=max(self._transport.settings.timeout, timeout + HTTP_MARGIN_SECONDS),
        )
        return checked(result, raise_on_error)

    async def _execute_streamed(
        self,
        body: Dict[str, Any],
        timeout: float,
        on_stdout: Optional[OnOutput],
        on_stderr: Optional[OnOutput],
    ) -> ExecuteResult:
        """The run as it happens (NDJSON): output to the callbacks, the ``end`` event's execution answered; a
        ``timeout`` or ``error`` event raised as the plain call's 408 or error answer is."""
        operation = "POST /execute"
        response = await self._transport.request(
            "POST",
            "/execute",
            json=body,
            headers={"accept": NDJSON},
            kind="execute",
            idempotent=False,
            timeout=max(self._transport.settings.timeout, timeout + HTTP_MARGIN_SECONDS),
            response_type="stream",
        )
        request_id = response.headers.get("x-request-id")
        async with AsyncRunEventStream(response) as events:
            async for event in events:
                kind = event.get("type")
                if kind == "stdout":
                    await deliver(on_stdout, event.get("data") or "")
                elif kind == "stderr":
                    await deliver(on_stderr, event.get("data") or "")
                elif kind == "end" and isinstance(event.get("execution"), dict):
                    result: ExecuteResult = convert(event["execution"], models.ExecuteResponse)
                    return result
                elif kind in ("timeout", "error"):
                    raise run_failure(event, operation, request_id)
        # Not resumed: a run's output is not kept to be read again, and sending it again could run it twice.
        raise NetworkError(
            f"{operation}: the stream ended before the run's result", operation=operation, request_id=request_id
        )

    async def execute_async(
        self,
        code: str,
        session_id: Optional[str],
        language: Language,
        timeout: float,
        context_id: Optional[str] = None,
    ) -> AsyncExecutionRun:
        """Starts a run and returns at once; ``wait()`` on the answer polls its record."""
        started = await self._transport.request(
            "POST",
            "/v1/execute_async",
            json=execute_body(code, session_id, language, timeout, context_id),
            kind="execute",
            idempotent=False,
        )
        return AsyncExecutionRun(self._executions, started["task_id"], started["session_id"])
