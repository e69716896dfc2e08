"""``session.commands``: E2B's ``sandbox.commands`` (``run``, ``connect``, ``list``, ``kill``, ``send_stdin``, and the
handle of a command in the background) over the session's background processes (``processes.py``), as the
TypeScript client's ``session.commands`` does. Every command is a background process on the server: ``run``
without ``background`` starts one and waits for it; a handle follows the process's output with the processes'
``OutputFollower`` (which reads a broken stream again from where it stopped), so a command outlives the client
that watches it and can be attached again with ``connect``.

Where E2B's names differ from the API's: ``envs`` is the API's ``env``, ``timeout`` (seconds) its
``timeout_seconds`` (rounded up); a command is named by its ``process_id`` (``proc_…``; ``pid`` is its process id
in the VM). A command a signal ended (killed, timed out), or whose VM went away, has exit code -1, as E2B reports.
"""

from __future__ import annotations

import math
from typing import Dict, List, Literal, Optional, Union, overload

from ..._command_result import CommandResult, result_of
from ...errors import CommandExitError, NotFoundError, SandboxdError
from ...models import ProcessInfo
from .._streams import OnOutput, deliver
from .processes import OutputFollower, Processes


async def _kill_process(processes: Processes, session_id: str, process_id: str) -> bool:
    """Kills a process; True when this call killed it, False when there was no such process or it had ended."""
    try:
        # The server answers an ended process as it is: only its record tells whether it was running.
        if (await processes.get(session_id, process_id)).status != "running":
            return False
        process = await processes.kill(session_id, process_id)
    except NotFoundError:
        return False
    # Still running: the kill was sent and the server stopped waiting for the end. Ended: by our SIGKILL, or by
    # itself in the moment between the two calls.
    return process.status == "running" or process.signal == "SIGKILL"


class AsyncCommandHandle:
    """A command running in the VM (E2B's ``CommandHandle``): made by ``session.commands.run(cmd,
    background=True)`` and ``session.commands.connect(process_id)``.

    Its output is read, and the callbacks called, while ``wait()`` runs: from the first byte the server kept (the
    newest 4 MiB), then live. ``stdout`` and ``stderr`` are what was read so far.
    """

    def __init__(
        self,
        processes: Processes,
        session_id: str,
        process: ProcessInfo,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
    ) -> None:
        self._processes = processes
        self._session_id = session_id
        self._on_stdout = on_stdout
        self._on_stderr = on_stderr
        self._follower: Optional[OutputFollower] = None
        self._result: Optional[CommandResult] = None
        self._disconnected = False
        #: Its id in the API (``proc_…``): for ``commands.connect``, ``commands.kill``, ``client.processes``.
        self.process_id: str = process.process_id
        #: Its process id in the VM (None when it ended before it reported one).
        self.pid: Optional[int] = process.pid
        #: Standard output read so far.
        self.stdout = ""
        #: Standard error read so far.
        self.stderr = ""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(process_id={self.process_id!r}, pid={self.pid!r})"

    @property
    def exit_code(self) -> Optional[int]:
        """Its exit code once ``wait()`` saw it end (-1: a signal ended it), None before."""
        return self._result.exit_code if self._result is not None else None

    @property
    def error(self) -> Optional[str]:
        """Why it ended other than by exiting (``CommandResult.error``), once ``wait()`` saw it end."""
        return self._result.error if self._result is not None else None

    async def wait(self) -> CommandResult:
        """Follows its output to its end: answers its result when it exits 0, raises ``CommandExitError``
        (carrying the result) otherwise, a killed command too (exit code -1, ``signal`` "SIGKILL"). After
        ``disconnect()``: SandboxdError."""
        if self._result is None:
            if self._disconnected:
                raise SandboxdError(f"stopped following command {self.process_id} (disconnect); it goes on")
            self._follower = OutputFollower(self._processes, self._session_id, self._add_stdout, self._add_stderr)
            try:
                ended = await self._follower.follow(self.process_id)
            except SandboxdError as error:
                if self._disconnected:
                    raise SandboxdError(
                        f"stopped following command {self.process_id} (disconnect); it goes on: "
                        f"commands.connect({self.process_id!r}) attaches again"
                    ) from error
                raise
            self._result = result_of(ended, self.stdout, self.stderr)
        if self._result.exit_code != 0:
            raise CommandExitError(self._result, session_id=self._session_id)
        return self._result

    async def kill(self) -> bool:
        """Kills it (SIGKILL to its process group): True when it was killed, False when it had already ended."""
        return await _kill_process(self._processes, self._session_id, self.process_id)

    async def send_stdin(self, data: Union[str, bytes]) -> None:
        """Writes to its stdin (started with ``stdin=True``; SandboxdError 409 otherwise, or once it ended)."""
        await self._processes.send_stdin(self._session_id, self.process_id, data)

    async def close_stdin(self) -> None:
        """Closes its stdin: it reads end of file."""
        await self._processes.close_stdin(self._session_id, self.process_id)

    async def disconnect(self) -> None:
        """Stops following it: the command goes on in the VM, a ``wait()`` under way (in another task or thread)
        raises SandboxdError, and so does any later one. ``session.commands.connect(process_id)`` attaches
        again."""
        self._disconnected = True
        if self._follower is not None:
            await self._follower.stop()

    async def _add_stdout(self, text: str) -> None:
        self.stdout += text
        await deliver(self._on_stdout, text)

    async def _add_stderr(self, text: str) -> None:
        self.stderr += text
        await deliver(self._on_stderr, text)


class AsyncCommands:
    """A session's commands (``session.commands``), E2B's ``sandbox.commands``: run a shell command and wait for
    it or keep it in the background, attach to one again (from another client too), list, kill, feed its stdin.
    """

    def __init__(self, processes: Processes, session_id: str) -> None:
        self._processes = processes
        self._session_id = session_id

    @overload
    async def run(
        self,
        cmd: str,
        *,
        background: Literal[False] = False,
        envs: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
        stdin: bool = False,
        tag: Optional[str] = None,
    ) -> CommandResult:
        ...

    @overload
    async def run(
        self,
        cmd: str,
        *,
        background: Literal[True],
        envs: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
        stdin: bool = False,
        tag: Optional[str] = None,
    ) -> AsyncCommandHandle:
        ...

    async def run(
        self,
        cmd: str,
        *,
        background: bool = False,
        envs: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        user: Optional[str] = None,
        timeout: Optional[float] = None,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
        stdin: bool = False,
        tag: Optional[str] = None,
    ) -> Union[CommandResult, AsyncCommandHandle]:
        """Runs ``cmd`` (a bash command line) in the VM (the session's first command starts its VM).

        Without ``background``: follows it to its end, handing output to ``on_stdout``/``on_stderr`` as it
        arrives, and answers its ``CommandResult`` when it exits 0, else raises ``CommandExitError`` carrying
        the result. ``background=True``: answers an ``AsyncCommandHandle`` as soon as it runs.

        ``envs``: variables on top of the session's; ``cwd``: its working directory (default: the user's home; it
        must exist); ``user``: the account that runs it (``root``, sandboxd's default, or ``user``: uid 1000,
        home /home/user, E2B's default user; no sudo); ``timeout``: seconds after which its process group is
        killed, rounded up (default None and 0: no limit of its own; E2B's default is 60); ``stdin=True``: keep
        its stdin open for ``send_stdin``; ``tag``: a label of yours, shown in lists.
        """
        if timeout is not None and not (timeout >= 0 and math.isfinite(timeout)):
            raise ValueError(f"timeout must be a number of seconds >= 0, got {timeout!r}")
        process = await self._processes.start(
            self._session_id,
            cmd,
            cwd=cwd,
            env=envs,
            user=user,
            timeout_seconds=math.ceil(timeout) if timeout else None,
            stdin=stdin,
            tag=tag,
        )
        handle = AsyncCommandHandle(self._processes, self._session_id, process, on_stdout, on_stderr)
        if background:
            return handle
        return await handle.wait()

    async def connect(
        self, process_id: str, *, on_stdout: Optional[OnOutput] = None, on_stderr: Optional[OnOutput] = None
    ) -> AsyncCommandHandle:
        """Attaches to a command that runs (or ended in the last 10 minutes), started by this client or another:
        ``wait()`` on the handle reads its output from the oldest the server kept, then live. No such command:
        NotFoundError."""
        process = await self._processes.get(self._session_id, process_id)
        return AsyncCommandHandle(self._processes, self._session_id, process, on_stdout, on_stderr)

    async def list(self) -> List[ProcessInfo]:
        """The commands that run now, oldest first (those that ended lately too: ``session.processes()``)."""
        processes = await self._processes.list(self._session_id)
        return [process for process in processes if process.status == "running"]

    async def kill(self, process_id: str) -> bool:
        """Kills a command (SIGKILL to its process group): True when it was killed, False when there was none or
        it had ended."""
        return await _kill_process(self._processes, self._session_id, process_id)

    async def send_stdin(self, process_id: str, data: Union[str, bytes]) -> None:
        """Writes to the stdin of a command started with ``stdin=True`` (text as UTF-8, bytes as they are)."""
        await self._processes.send_stdin(self._session_id, process_id, data)

    async def close_stdin(self, process_id: str) -> None:
        """Closes a command's stdin: it reads end of file."""
        await self._processes.close_stdin(self._session_id, process_id)
