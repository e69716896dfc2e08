# Generated from sandboxd/_async/resources/processes.py by scripts/unasync.py: do not edit.
"""/v1/sessions/{id}/processes...: background processes in a session's VM. Start programs beside whatever else runs
there, read or follow their output (NDJSON), write to their stdin, signal and kill them; ``run`` starts one and
hands its output to callbacks as it arrives, until it ends.

A process is held by the server node that started it: a restart of the server ends it.
"""

from __future__ import annotations

import base64
from typing import Any, Dict, List, Optional, Union

from ...errors import NetworkError, SandboxdError
from ...models import ProcessInfo
from ...types import ProcessSignal
from ..._http import defined
from ..._lines import NDJSON
from .._streams import ProcessEventStream, OnOutput, deliver
from ..transport import Transport

#: Times the output is read again after its stream ended early (a broken connection) without new output.
MAX_RESUMES_WITHOUT_OUTPUT = 3


def _start_body(
    command: Optional[str],
    argv: Optional[List[str]],
    cwd: Optional[str],
    env: Optional[Dict[str, str]],
    timeout_seconds: Optional[int],
    stdin: bool,
    tag: Optional[str],
    user: Optional[str] = None,
) -> Dict[str, Any]:
    if (command is None) == (argv is None):
        raise TypeError("give exactly one of command (run by /bin/bash -c) and argv (run directly)")
    body = defined(command=command, argv=argv, cwd=cwd, user=user, env=env, timeout_seconds=timeout_seconds, tag=tag)
    if stdin:
        body["stdin"] = True
    return body


class OutputFollower:
    """Follows a process's output to its end (``run``, and the handles of ``session.commands``): hands each piece
    of stdout and stderr to its callback, reads the output again from where it stopped when a stream breaks
    before the ``exit`` event, and answers the process as it ended. ``stop()`` (from another task or thread)
    ends the following; the process goes on."""

    def __init__(
        self,
        processes: "Processes",
        session_id: str,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
    ) -> None:
        self._processes = processes
        self._session_id = session_id
        self._on_stdout = on_stdout
        self._on_stderr = on_stderr
        self._stream: Optional[ProcessEventStream] = None
        #: True once ``stop()`` was called.
        self.stopped = False

    def follow(self, process_id: Optional[str], stream: Optional[ProcessEventStream] = None) -> ProcessInfo:
        """Reads ``stream`` (a start's answer, which names the process) or else the output of ``process_id``
        from the oldest the server keeps, to the ``exit`` event. After ``stop()``: SandboxdError; a stream that
        keeps breaking without new output, or before the process was named: NetworkError."""
        after = resumes = 0
        while True:
            if stream is None:
                assert process_id is not None
                stream = self._processes.output(self._session_id, process_id, after=after, follow=True)
            self._stream = stream
            if self.stopped:
                stream.close()  # stop() came while this stream was being opened
            seen = 0
            with stream:
                for event in stream:
                    seen += 1
                    kind = event["type"]
                    if kind == "start":
                        process_id = event["process"]["process_id"]
                    elif kind == "stdout":
                        deliver(self._on_stdout, event.get("data", ""))
                    elif kind == "stderr":
                        deliver(self._on_stderr, event.get("data", ""))
                    elif kind == "exit":
                        return event["process"]
            if self.stopped:
                raise SandboxdError(f"stopped following process {process_id}; it goes on")
            # The stream ended before the exit event: the connection broke, or the server is closing.
            after = max(after, stream.last_seq)
            resumes = 0 if seen else resumes + 1
            if process_id is None or resumes > MAX_RESUMES_WITHOUT_OUTPUT:
                operation = f"POST /v1/sessions/{self._session_id}/processes"
                if process_id is not None:
                    operation = f"GET /v1/sessions/{self._session_id}/processes/{process_id}/output"
                still = f" (process {process_id} may still run)" if process_id else ""
                raise NetworkError(
                    f"{operation}: the output stream ended before the process did{still}", operation=operation
                )
            stream = None

    def stop(self) -> None:
        """Stops following: the stream being read ends, and ``follow`` raises SandboxdError."""
        self.stopped = True
        if self._stream is not None:
            self._stream.close()


class Processes:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def start(
        self,
        session_id: str,
        command: Optional[str] = None,
        *,
        argv: Optional[List[str]] = None,
        cwd: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
        timeout_seconds: Optional[int] = None,
        stdin: bool = False,
        tag: Optional[str] = None,
        user: Optional[str] = None,
    ) -> ProcessInfo:
        """Starts a program in the session's VM (starting the VM when the session has none) and returns once it
        runs, without waiting for it to end.

        ``command``: a command line, run by ``/bin/bash -c``; or ``argv``: a program and its arguments, run
        directly (exactly one of the two). ``cwd``: its working directory (default /root; it must exist);
        ``env``: variables on top of the session's; ``timeout_seconds``: its process group is killed after this
        long; ``stdin=True``: keep its stdin open for ``send_stdin`` (otherwise it reads /dev/null); ``tag``: a
        label of yours; ``user``: the VM account that runs it (``root``, the default, or ``user``: uid 1000, no
        sudo). A program that cannot start (its directory or program missing): SandboxdError 400.
        """
        body = _start_body(command, argv, cwd, env, timeout_seconds, stdin, tag, user)
        # Not idempotent: a retry after a start that went through would start the program twice.
        return self._transport.request(
            "POST", "/v1/sessions/{session_id}/processes", params={"session_id": session_id}, json=body, kind="session"
        )

    def run(
        self,
        session_id: str,
        command: Optional[str] = None,
        *,
        argv: Optional[List[str]] = None,
        cwd: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
        timeout_seconds: Optional[int] = None,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
        user: Optional[str] = None,
    ) -> ProcessInfo:
        """Starts a program (as ``start`` does) and follows its output until it ends: ``on_stdout`` and
        ``on_stderr`` are called with each piece of text as it arrives. Returns the process as it ended
        (``status``, ``exit_code``, ``signal``, ``timed_out``); a non-zero exit is not an error.

        Should the stream break before the end, its output is read again from where it stopped.
        """
        body = _start_body(command, argv, cwd, env, timeout_seconds, False, None, user)
        response = self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/processes",
            params={"session_id": session_id},
            json=body,
            headers={"accept": NDJSON},
            kind="session",
            response_type="stream",
        )
        follower = OutputFollower(self, session_id, on_stdout, on_stderr)
        return follower.follow(None, ProcessEventStream(response, self._transport))

    def list(self, session_id: str) -> List[ProcessInfo]:
        """The session's processes: those running, and those that ended in the last 10 minutes, oldest first."""
        answer = self._transport.request(
            "GET", "/v1/sessions/{session_id}/processes", params={"session_id": session_id}, kind="session"
        )
        return answer["processes"]

    def get(self, session_id: str, process_id: str) -> ProcessInfo:
        """One process: ``status`` (running, exited or failed), ``exit_code``, ``signal``, ``output_seq``…"""
        return self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/processes/{process_id}",
            params={"session_id": session_id, "process_id": process_id},
        )

    def output(
        self, session_id: str, process_id: str, *, after: int = 0, follow: bool = True
    ) -> ProcessEventStream:
        """Opens the process's output: iterate it for events (dicts with ``type``: ``stdout``/``stderr`` with
        ``seq`` and ``data``, ``dropped`` with ``events``, and ``exit`` with ``process``, the last one).

        ``after``: only the output events after this number (0: from the oldest the server keeps, the newest
        4 MiB); ``follow=True``: live output follows until the process ends, else the stream ends with what is
        there now. Closing the stream leaves the process running.
        """
        response = self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/processes/{process_id}/output",
            params={"session_id": session_id, "process_id": process_id},
            query={"after": after, "follow": follow},
            headers={"accept": NDJSON},
            response_type="stream",
        )
        return ProcessEventStream(response, self._transport)

    def send_stdin(
        self, session_id: str, process_id: str, data: Union[str, bytes], *, eof: bool = False
    ) -> ProcessInfo:
        """Writes to the stdin of a process started with ``stdin=True`` (text as UTF-8; bytes as they are);
        ``eof=True`` closes it after. No open stdin, or the process ended: SandboxdError 409."""
        if isinstance(data, (bytes, bytearray, memoryview)):
            body: Dict[str, Any] = {"data_base64": base64.b64encode(bytes(data)).decode("ascii")}
        elif isinstance(data, str):
            body = {"data": data}
        else:
            raise TypeError(f"data must be str or bytes, got {type(data).__name__}")
        if eof:
            body["eof"] = True
        # Not idempotent: a retry after a write that went through would write it twice.
        return self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/processes/{process_id}/stdin",
            params={"session_id": session_id, "process_id": process_id},
            json=body,
        )

    def close_stdin(self, session_id: str, process_id: str) -> ProcessInfo:
        """Closes the process's stdin (the program reads end of file). Already closed, or the process ended:
        SandboxdError 409."""
        return self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/processes/{process_id}/stdin",
            params={"session_id": session_id, "process_id": process_id},
            json={"eof": True},
        )

    def signal(self, session_id: str, process_id: str, signal: ProcessSignal) -> ProcessInfo:
        """Sends a signal (``"SIGTERM"``, ``"SIGINT"``, ``"SIGKILL"``, ``"SIGHUP"``, ``"SIGQUIT"``, ``"SIGUSR1"``,
        ``"SIGUSR2"``, ``"SIGSTOP"`` or ``"SIGCONT"``) to the program's process group; answers at once (the
        process may still run). The process ended: SandboxdError 409."""
        return self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/processes/{process_id}/signal",
            params={"session_id": session_id, "process_id": process_id},
            json={"signal": signal},
        )

    def kill(self, session_id: str, process_id: str) -> ProcessInfo:
        """Kills the program's process group (SIGKILL) and answers the process once it ended; the VM and its other
        runs go on. An ended process answers as it is."""
        return self._transport.request(
            "DELETE",
            "/v1/sessions/{session_id}/processes/{process_id}",
            params={"session_id": session_id, "process_id": process_id},
        )
