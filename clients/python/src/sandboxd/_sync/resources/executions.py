# Generated from sandboxd/_async/resources/executions.py by scripts/unasync.py: do not edit.
"""Execution (task) records: get, list, and waiting for an asynchronous run to complete."""

from __future__ import annotations

from typing import List, Optional

from ...errors import ExecutionError
from ...types import ExecutionRecord
from .._backend import monotonic, sleep
from ..transport import Transport


def assert_succeeded(record: ExecutionRecord) -> ExecutionRecord:
    """Raises ExecutionError for a record that completed badly."""
    if record["status"] == "completed" and record["exit_code"] in (0, None):
        return record
    raise ExecutionError(
        record["error"] or f"execution {record['id']} {record['status']} with exit code {record['exit_code']}",
        execution_id=record["id"],
        session_id=record["session_id"],
        exit_code=record["exit_code"],
        stdout=record["serialized_stdout"],
        stderr=record["serialized_stderr"],
    )


class Executions:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def get(self, execution_id: int) -> ExecutionRecord:
        return self._transport.request("GET", "/v1/executions/{item_id}", params={"item_id": execution_id})

    def cancel(self, execution_id: int) -> ExecutionRecord:
        """Stops a queued or running execution (a command is killed, Python is interrupted with its state kept; the
        VM and its other runs go on) and returns its final record (status ``failed``). Ended already: SandboxdError 409.
        """
        return self._transport.request(
            "POST", "/v1/executions/{item_id}/cancel", params={"item_id": execution_id}
        )

    def list(
        self, *, session_id: Optional[str] = None, limit: Optional[int] = None, offset: Optional[int] = None
    ) -> List[ExecutionRecord]:
        """The caller's execution records, newest first."""
        return self._transport.request(
            "GET", "/v1/executions/", query={"session_id": session_id, "limit": limit, "offset": offset}
        )

    def exists(self) -> bool:
        """HEAD /v1/executions/: true when the credentials may list executions."""
        self._transport.request("HEAD", "/v1/executions/")
        return True

    def wait(
        self,
        execution_id: int,
        *,
        poll_interval: float = 1.0,
        timeout: Optional[float] = None,
        raise_on_error: bool = False,
    ) -> ExecutionRecord:
        """Polls the record (once a second by default) until ``is_complete``.

        ``timeout``: give up after this many seconds with an ExecutionError (default: no limit; the server ends
        runs at their deadline). ``raise_on_error``: raise ExecutionError when the run failed or timed out.
        """
        deadline = None if timeout is None else monotonic() + timeout
        while True:
            record = self.get(execution_id)
            if record["is_complete"]:
                return assert_succeeded(record) if raise_on_error else record
            if deadline is not None and monotonic() + poll_interval > deadline:
                raise ExecutionError(
                    f"execution {execution_id} is still {record['status']} after {timeout} s",
                    execution_id=execution_id,
                    session_id=record["session_id"],
                )
            sleep(poll_interval)


class ExecutionRun:
    """A run started with ``execute_async``: its id, and ``wait()`` for its record."""

    def __init__(self, executions: Executions, id: int, session_id: str) -> None:
        self._executions = executions
        #: The task (execution) id.
        self.id = id
        self.session_id = session_id

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r}, session_id={self.session_id!r})"

    def get(self) -> ExecutionRecord:
        return self._executions.get(self.id)

    def cancel(self) -> ExecutionRecord:
        """Stops the run (see ``Executions.cancel``) and returns its final record."""
        return self._executions.cancel(self.id)

    def wait(
        self, *, poll_interval: float = 1.0, timeout: Optional[float] = None, raise_on_error: bool = False
    ) -> ExecutionRecord:
        """Polls once a second (by default) until the run is complete."""
        return self._executions.wait(
            self.id, poll_interval=poll_interval, timeout=timeout, raise_on_error=raise_on_error
        )
