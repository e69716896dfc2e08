# Generated from sandboxd/_async/session.py by scripts/unasync.py: do not edit.
"""A session as an object: ``client.sessions.create()`` gives one; its methods act on that session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Union

from ..errors import SessionError
from ..models import ContextInfo, FileEntry, ProcessInfo, PtySession, SessionCreateResponse, SessionStatus, SessionUsage
from ..types import (
    AppUrl,
    ExecuteResult,
    ExecutionRecord,
    KillResult,
    Language,
    ProcessSignal,
    SessionDetails,
    UploadResult,
    WrittenFile,
)
from .._multipart import UploadData
from ._streams import FileWatchStream, ProcessEventStream, OnOutput
from ._terminal import TerminalConnection, OnData
from .resources.commands import Commands
from .resources.execution import DEFAULT_EXECUTE_TIMEOUT_SECONDS
from .resources.executions import ExecutionRun

if TYPE_CHECKING:
    import os

    from .context import SessionClient


class Session:
    """One session: run code in its VM, move files, watch it, open terminals, kill its VM.

    Used as a context manager (``with client.sessions.create() as session``), it kills the session's
    VM at the end.
    """

    def __init__(self, client: "SessionClient", id: str, created: Optional[SessionCreateResponse] = None) -> None:
        self._client = client
        #: The session id (a UUID).
        self.id = id
        #: What creating it answered (None for ``client.sessions.connect(id)``).
        self.created = created
        #: E2B's ``sandbox.commands``: ``run`` a shell command (waited for, or in the background), ``connect``,
        #: ``list``, ``kill``, ``send_stdin``.
        self.commands = Commands(client.processes, id)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r})"

    def execute(
        self,
        code: str,
        *,
        language: Language = "python",
        timeout: float = DEFAULT_EXECUTE_TIMEOUT_SECONDS,
        raise_on_error: bool = False,
        context_id: Optional[str] = None,
        on_stdout: Optional[OnOutput] = None,
        on_stderr: Optional[OnOutput] = None,
    ) -> ExecuteResult:
        """Runs code (Python by default: state survives between calls) or a command (``language="bash"``) and
        waits for the result. The first call starts the session's VM.

        ``timeout``: seconds the server waits (1 to 600); a longer run raises ExecutionError with
        ``execution_id`` and goes on. ``raise_on_error``: raise ExecutionError for a failed run too.
        ``context_id`` (Python only): run in that context (``create_context``) instead of the default one.
        ``on_stdout``/``on_stderr`` (E2B's names; asyncio: coroutine functions too): called with each piece of
        output as the code writes it, Python's too (the run is streamed; the answer still has all of it).
        Python answers carry ``results`` (figures as PNG, tables as HTML, the last expression's value…),
        ``exception`` (``name``, ``value``, ``traceback``, or None) and ``context_id``.
        """
        return self._client.execute(
            code,
            session_id=self.id,
            language=language,
            timeout=timeout,
            raise_on_error=raise_on_error,
            context_id=context_id,
            on_stdout=on_stdout,
            on_stderr=on_stderr,
        )

    def execute_async(
        self,
        code: str,
        *,
        language: Language = "python",
        timeout: float = DEFAULT_EXECUTE_TIMEOUT_SECONDS,
        context_id: Optional[str] = None,
    ) -> ExecutionRun:
        """Starts a run and returns at once; ``run.wait()`` polls its record once a second."""
        return self._client.execute_async(
            code, session_id=self.id, language=language, timeout=timeout, context_id=context_id
        )

    def create_context(self, *, cwd: Optional[str] = None) -> ContextInfo:
        """Makes a Python context: an interpreter of its own in the VM, with its own variables (E2B's
        ``create_code_context``), started in ``cwd`` (default /root). Run in it with ``execute(code,
        context_id=context["id"])``."""
        return self._client.contexts.create(self.id, cwd=cwd)

    def list_contexts(self) -> List[ContextInfo]:
        """The session's Python contexts, ``default`` first."""
        return self._client.contexts.list(self.id)

    def restart_context(self, context_id: str) -> ContextInfo:
        """Clears a context's state (its interpreter ends; the next run starts afresh); ``default`` too."""
        return self._client.contexts.restart(self.id, context_id)

    def delete_context(self, context_id: str) -> None:
        """Deletes a context you made and ends its interpreter (not ``default``: restart that one)."""
        self._client.contexts.delete(self.id, context_id)

    def upload(
        self, data: UploadData, remote_path: str, *, recursive: bool = False, filename: Optional[str] = None
    ) -> UploadResult:
        """Writes ``data`` (bytes, text, a ``pathlib.Path`` or a binary file) to ``remote_path`` in the VM;
        ``recursive=True`` unpacks a tar archive (gzip allowed) there."""
        return self._client.files.upload(self.id, data, remote_path, recursive=recursive, filename=filename)

    def upload_file(self, local_path: Union[str, "os.PathLike[str]"], remote_path: str) -> UploadResult:
        """Copies a local file into the VM (streamed from disk)."""
        return self._client.files.upload_file(self.id, local_path, remote_path)

    def download(self, remote_path: str) -> bytes:
        """The bytes of a file in the VM."""
        return self._client.files.download(self.id, remote_path)

    def download_file(self, remote_path: str, local_path: Union[str, "os.PathLike[str]"]) -> int:
        """Copies a file of the VM to ``local_path`` (streamed to disk); answers its size."""
        return self._client.files.download_file(self.id, remote_path, local_path)

    def stat(self, remote_path: str) -> FileEntry:
        """What is at a path in the VM (``type``, ``size``, ``mode``, ``modified_at``; symlinks not followed).
        Nothing there: NotFoundError."""
        return self._client.files.stat(self.id, remote_path)

    def exists(self, remote_path: str) -> bool:
        """Whether anything is at a path in the VM."""
        return self._client.files.exists(self.id, remote_path)

    def write_files(self, files: Sequence[Mapping[str, Any]]) -> List[WrittenFile]:
        """Writes several files into the VM in one call (``path``, ``data`` as str or bytes, optional ``mode``)."""
        return self._client.files.write(self.id, files)

    def mkdir(self, remote_path: str, *, parents: bool = True) -> bool:
        """Makes a directory in the VM (with its parents unless ``parents=False``); False when it was already there."""
        return self._client.files.mkdir(self.id, remote_path, parents=parents)

    def remove(self, remote_path: str, *, recursive: bool = False) -> bool:
        """Removes a file or an empty directory in the VM (``recursive=True``: a whole tree); False when nothing was
        there."""
        return self._client.files.remove(self.id, remote_path, recursive=recursive)

    def rename(self, old_path: str, new_path: str, *, overwrite: bool = False) -> FileEntry:
        """Moves a file or directory in the VM to ``new_path``; answers what is there then."""
        return self._client.files.rename(self.id, old_path, new_path, overwrite=overwrite)

    def watch(self, remote_path: str, *, recursive: bool = False) -> FileWatchStream:
        """Watches a directory in the VM (``recursive=True``: the tree under it): a stream of its changes, ``start``
        first (the watch is in place), then ``create``, ``write``, ``remove``, ``rename``, ``chmod``… until it is
        closed or the directory goes (``end``). Nothing there: NotFoundError; not a directory: SandboxdError 409."""
        return self._client.files.watch(self.id, remote_path, recursive=recursive)

    def status(self) -> SessionStatus:
        """Session and VM status: ``vm_alive``, ``vm_status``, ``expires_in_seconds``…"""
        return self._client.sessions.status(self.id)

    def details(self) -> SessionDetails:
        """Settings, metadata, env names and the current VM."""
        return self._client.sessions.info(self.id)

    def usage(self) -> SessionUsage:
        return self._client.sessions.usage(self.id)

    def kill(self) -> KillResult:
        """Kills the session's VM (the session stays; the next execute starts a new VM)."""
        return self._client.sessions.kill(self.id)

    def app_url(self, port: int = 80) -> AppUrl:
        """The public URL of a port inside the VM."""
        return self._client.sessions.app_url(self.id, port)

    def create_terminal(
        self,
        *,
        cols: int = 80,
        rows: int = 24,
        command: Optional[str] = None,
        shell: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
        cwd: Optional[str] = None,
        scrollback_bytes: Optional[int] = None,
    ) -> PtySession:
        """Starts a terminal in the session's VM (starting the VM if needed); ``attach_terminal`` connects to it."""
        return self._client.terminals.create(
            session_id=self.id,
            cols=cols,
            rows=rows,
            command=command,
            shell=shell,
            env=env,
            cwd=cwd,
            scrollback_bytes=scrollback_bytes,
        )

    def attach_terminal(self, pty_id: str, *, on_data: Optional[OnData] = None) -> TerminalConnection:
        """Attaches to one of the session's terminals over a WebSocket."""
        return self._client.terminals.attach(pty_id, session_id=self.id, on_data=on_data)

    def start_process(
        self,
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
        """Starts a background process in the session's VM (``command`` through bash, or ``argv``) and returns once
        it runs; ``stdin=True`` keeps its stdin open for ``send_stdin``."""
        return self._client.processes.start(
            self.id,
            command,
            argv=argv,
            cwd=cwd,
            env=env,
            timeout_seconds=timeout_seconds,
            stdin=stdin,
            tag=tag,
            user=user,
        )

    def run_process(
        self,
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
        """Starts a process and follows it to its end, calling ``on_stdout``/``on_stderr`` with its output as it
        arrives; returns the process as it ended (``exit_code``, ``signal``…)."""
        return self._client.processes.run(
            self.id,
            command,
            argv=argv,
            cwd=cwd,
            env=env,
            timeout_seconds=timeout_seconds,
            on_stdout=on_stdout,
            on_stderr=on_stderr,
            user=user,
        )

    def processes(self) -> List[ProcessInfo]:
        """The session's background processes: running ones, and those that ended in the last 10 minutes."""
        return self._client.processes.list(self.id)

    def get_process(self, process_id: str) -> ProcessInfo:
        """One background process of the session."""
        return self._client.processes.get(self.id, process_id)

    def process_output(self, process_id: str, *, after: int = 0, follow: bool = True) -> ProcessEventStream:
        """A process's output events after ``after``; with ``follow``, live until it ends (the ``exit`` event)."""
        return self._client.processes.output(self.id, process_id, after=after, follow=follow)

    def send_stdin(self, process_id: str, data: Union[str, bytes], *, eof: bool = False) -> ProcessInfo:
        """Writes text or bytes to a process's stdin (started with ``stdin=True``); ``eof=True`` closes it after."""
        return self._client.processes.send_stdin(self.id, process_id, data, eof=eof)

    def close_stdin(self, process_id: str) -> ProcessInfo:
        """Closes a process's stdin."""
        return self._client.processes.close_stdin(self.id, process_id)

    def signal_process(self, process_id: str, signal: ProcessSignal) -> ProcessInfo:
        """Sends a signal (``"SIGTERM"``…) to a process's process group."""
        return self._client.processes.signal(self.id, process_id, signal)

    def kill_process(self, process_id: str) -> ProcessInfo:
        """Kills a process (SIGKILL to its process group) and answers it once it ended."""
        return self._client.processes.kill(self.id, process_id)

    def executions(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> List[ExecutionRecord]:
        """This session's execution records, newest first."""
        return self._client.executions.list(session_id=self.id, limit=limit, offset=offset)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.kill()
        except SessionError:
            pass  # no VM to kill
