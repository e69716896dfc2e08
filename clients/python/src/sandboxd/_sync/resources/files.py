# Generated from sandboxd/_async/resources/files.py by scripts/unasync.py: do not edit.
"""POST /upload and /download: files into and out of a session's VM; /v1/sessions/{id}/files...: list, stat, exists,
mkdir, remove and rename there (E2B's ``files.list/get_info/exists/make_dir/remove/rename``), and watch a directory
for changes (NDJSON)."""

from __future__ import annotations

import base64
import os
import pathlib
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ...models import FileEntry, FileListing
from ...types import UploadResult, WrittenFile
from ..._http import defined
from ..._multipart import UploadData, multipart_body
from .._streams import FileWatchStream
from ..transport import Transport

NDJSON = "application/x-ndjson"


class Files:
    def __init__(self, transport: Transport) -> None:
        self._transport = transport

    def upload(
        self,
        session_id: str,
        data: UploadData,
        remote_path: str,
        *,
        recursive: bool = False,
        filename: Optional[str] = None,
    ) -> UploadResult:
        """Writes ``data`` to ``remote_path`` in the session's VM (absolute, or relative to /root; a trailing "/"
        keeps ``filename``).

        ``data``: bytes, text (a ``str`` is the content, sent as UTF-8, not a path), a ``pathlib.Path`` (the
        file's bytes, streamed from disk) or a binary file object. ``recursive=True``: ``data`` is a tar archive
        (gzip allowed) unpacked at ``remote_path``.
        """
        name = filename or ([part for part in remote_path.split("/") if part] or ["file"])[-1]
        # Fields before the file, so the server can stream the file straight into the VM.
        body = multipart_body(
            [("session_id", session_id), ("remote_path", remote_path), ("recursive", "true" if recursive else "false")],
            "file",
            name,
            data,
        )
        # Writing the same bytes to the same path twice changes nothing: safe to retry.
        return self._transport.request("POST", "/upload", body=body, kind="session", idempotent=True)

    def upload_file(
        self, session_id: str, local_path: Union[str, "os.PathLike[str]"], remote_path: str
    ) -> UploadResult:
        """Copies a local file into the VM, streamed from disk (``remote_path`` ending in "/": same name)."""
        path = pathlib.Path(os.fspath(local_path))
        return self.upload(session_id, path, remote_path, filename=path.name or "file")

    def list(
        self, session_id: str, remote_path: str = "/root", *, depth: Optional[int] = None, limit: Optional[int] = None
    ) -> FileListing:
        """The entries of directory ``remote_path`` in the session's VM (relative to /root), sorted by name; ``depth``
        > 1 lists subdirectories too (each directory followed by its contents), at most ``limit`` entries
        (``truncated`` says when more were left out)."""
        return self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/files",
            params={"session_id": session_id},
            query=defined(path=remote_path, depth=depth, limit=limit),
        )

    def stat(self, session_id: str, remote_path: str) -> FileEntry:
        """What is at ``remote_path`` in the session's VM (relative to /root): ``type`` (file, directory, symlink or
        other), ``size``, ``mode``, ``modified_at``, ``symlink_target``; symlinks are not followed. Nothing there:
        NotFoundError."""
        return self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/files/stat",
            params={"session_id": session_id},
            query={"path": remote_path},
        )

    def exists(self, session_id: str, remote_path: str) -> bool:
        """Whether anything (a file, a directory, a symlink, even a dangling one) is at ``remote_path``."""
        answer = self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/files/exists",
            params={"session_id": session_id},
            query={"path": remote_path},
        )
        return answer["exists"]

    def write(self, session_id: str, files: Sequence[Mapping[str, Any]]) -> List[WrittenFile]:
        """Writes several files into the session's VM in one call: each a mapping with ``path`` and ``data`` (``str`` is
        written as UTF-8, ``bytes`` as they are) and optionally ``mode``. Missing parent directories are made, what
        was at a path is replaced. Returns each absolute ``path`` with its ``size``. Large files: ``upload`` (it streams).
        """
        body = []
        for file in files:
            data = file["data"]
            entry: Dict[str, Any] = {"path": file["path"]}
            if isinstance(data, str):
                entry["content"] = data
            else:
                entry["content_base64"] = base64.b64encode(bytes(data)).decode("ascii")
            if file.get("mode") is not None:
                entry["mode"] = file["mode"]
            body.append(entry)
        answer = self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/files/write",
            params={"session_id": session_id},
            json={"files": body},
            kind="session",
        )
        return answer["files"]

    def mkdir(self, session_id: str, remote_path: str, *, parents: bool = True) -> bool:
        """Makes directory ``remote_path`` (with ``parents``, its missing parents too, like ``mkdir -p``); True when
        it made it, False when it was already there. A file in the way: SandboxdError 409; without ``parents``, a
        missing parent: NotFoundError."""
        answer = self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/files/mkdir",
            params={"session_id": session_id},
            json={"path": remote_path, "parents": parents},
            # Making a directory that is there already changes nothing: safe to retry.
            idempotent=True,
        )
        return answer["created"]

    def remove(self, session_id: str, remote_path: str, *, recursive: bool = False) -> bool:
        """Removes ``remote_path`` (a symlink itself, not its target); True when something was removed, False when
        nothing was there. A directory that is not empty needs ``recursive=True`` (else SandboxdError 409); the
        root directory is refused (400)."""
        answer = self._transport.request(
            "DELETE",
            "/v1/sessions/{session_id}/files",
            params={"session_id": session_id},
            query={"path": remote_path, "recursive": recursive},
        )
        return answer["removed"]

    def rename(self, session_id: str, old_path: str, new_path: str, *, overwrite: bool = False) -> FileEntry:
        """Moves ``old_path`` to ``new_path`` (the new path itself, never a directory to move into) and answers what
        is at ``new_path`` then. Something there without ``overwrite=True``: SandboxdError 409; ``old_path`` (or
        the directory of ``new_path``) missing: NotFoundError."""
        # Not idempotent: a retry after a move that went through would find ``old_path`` gone.
        return self._transport.request(
            "POST",
            "/v1/sessions/{session_id}/files/rename",
            params={"session_id": session_id},
            json={"from": old_path, "to": new_path, "overwrite": overwrite},
        )

    def watch(self, session_id: str, remote_path: str, *, recursive: bool = False) -> FileWatchStream:
        """Watches directory ``remote_path`` in the session's VM (relative to /root; starting the VM when the session
        has none) and answers the stream of its changes as they happen: iterate it for events (dicts with
        ``type``). ``start`` comes first: the watch is in place, every later change is reported. Then ``create``
        (also the new name of a rename), ``write``, ``remove``, ``rename`` (the old name) and ``chmod``, each with
        ``path`` (absolute) and ``is_dir``; ``overflow`` when the guest dropped events; ``error`` with ``message``.
        ``recursive=True``: the whole tree under the directory, directories made later too (what is already in
        them is reported as created).

        The watch lasts until the stream is closed (use it as a context manager, ``with``), the server ends
        the answer, or the directory is removed or moved away (an ``end`` event, the last). Errors come from this
        call, before any event: nothing at ``remote_path``, or no such session: NotFoundError; not a directory:
        SandboxdError 409; the session holds the most watches it may at once (16): QuotaExceededError.
        """
        response = self._transport.request(
            "GET",
            "/v1/sessions/{session_id}/files/watch",
            params={"session_id": session_id},
            query={"path": remote_path, "recursive": recursive},
            headers={"accept": NDJSON},
            response_type="stream",
        )
        return FileWatchStream(response, self._transport)

    def download(self, session_id: str, remote_path: str) -> bytes:
        """The bytes of ``remote_path`` in the session's VM (asked for raw, not base64, for any size)."""
        return self._transport.request(
            "POST",
            "/download",
            # No `kind`: a 404 here is usually a missing file, so it is a NotFoundError (the message says which).
            json={"filename": remote_path, "session_id": session_id},
            headers={"accept": "application/octet-stream"},
            idempotent=True,
            response_type="bytes",
        )

    def download_file(self, session_id: str, remote_path: str, local_path: Union[str, "os.PathLike[str]"]) -> int:
        """Copies ``remote_path`` of the VM to ``local_path`` (streamed; the file is replaced only when the
        download completes); answers the number of bytes."""
        target = os.fspath(local_path)
        partial = f"{target}.part"
        with open(partial, "wb") as sink:
            try:
                size = self._transport.request(
                    "POST",
                    "/download",
                    json={"filename": remote_path, "session_id": session_id},
                    headers={"accept": "application/octet-stream"},
                    idempotent=False,  # a retry would append to what the first attempt wrote
                    response_type="bytes",
                    sink=sink,
                )
            except BaseException:
                sink.close()
                os.unlink(partial)
                raise
        os.replace(partial, target)
        return size
