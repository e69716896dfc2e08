"""How a command of ``session.commands`` ended (E2B's ``CommandResult``), made from the process record the server
keeps and the output the handle collected. Apart from the resources so that ``errors.CommandExitError`` can carry
one without importing a client."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .models import ProcessInfo


@dataclass(frozen=True)
class CommandResult:
    """A command's end: ``exit_code`` 0 when it succeeded, -1 when a signal ended it (``signal``) or its VM went
    away (``error``), as E2B reports those."""

    #: Its exit code; -1 when a signal ended it or its VM went away.
    exit_code: int
    #: All of its standard output (a late reader gets the newest 4 MiB the server keeps).
    stdout: str
    stderr: str
    #: Why it ended other than by exiting: ``killed by SIGKILL``, ``timed out (killed by SIGKILL)``, or the
    #: server's error; None when it exited.
    error: Optional[str]
    #: Its process id in the VM (None when it ended before it reported one).
    pid: Optional[int]
    #: Its id in the API (``proc_…``): what ``commands.connect``, ``kill`` and ``send_stdin`` take.
    process_id: str
    #: The signal that ended it (``SIGKILL``…), when one did.
    signal: Optional[str] = None


def result_of(process: ProcessInfo, stdout: str, stderr: str) -> CommandResult:
    """The result of an ended process, with the output collected while following it."""
    pid, process_id = process.pid, process.process_id
    if process.status == "exited" and process.exit_code is not None:
        return CommandResult(process.exit_code, stdout, stderr, None, pid, process_id)
    killer = f"killed by {process.signal or 'a signal'}"
    if process.status == "failed":
        error = process.error or "its VM or agent went away while it ran"
    else:
        error = f"timed out ({killer})" if process.timed_out else killer
    return CommandResult(-1, stdout, stderr, error, pid, process_id, signal=process.signal)
