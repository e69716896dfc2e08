"""multipart/form-data bodies for uploads, streamed: the fields first (so the server can stream the file
straight into the VM), then the file from memory or from disk, with its length known up front.

httpx's own multipart (``files=``) streams files too, but rewinds a file object to its start (an upload "from
where the file stands" would send the wrong bytes) and wants a file already open for each attempt; this body is
made again for each attempt (a retry reopens a path, or seeks a file object back to where it stood) and is
handed to httpx as its ``content``."""

from __future__ import annotations

import os
import secrets
from typing import Any, Iterator, List, Tuple, Union

from ._http import Body, iter_file

#: What can be uploaded: bytes, text (sent as UTF-8), a path (``pathlib.Path``: the file's bytes, read from disk
#: on each attempt), or a binary file object (read from where it stands; rewound for a retry when seekable).
UploadData = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", Any]


def _quote(value: str) -> str:
    # RFC 7578: field values in Content-Disposition are quoted strings; escape what would end them.
    return value.replace("\\", "\\\\").replace('"', "%22").replace("\r", "%0D").replace("\n", "%0A")


def multipart_body(fields: List[Tuple[str, str]], file_field: str, filename: str, data: UploadData) -> Body:
    boundary = f"sandboxd-{secrets.token_hex(16)}"
    head = b"".join(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(name)}"\r\n\r\n'.encode("utf-8")
        + value.encode("utf-8")
        + b"\r\n"
        for name, value in fields
    )
    head += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="{_quote(file_field)}"; filename="{_quote(filename)}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode("utf-8")
    tail = f"\r\n--{boundary}--\r\n".encode("ascii")

    if isinstance(data, str):
        data = data.encode("utf-8")
    if isinstance(data, (bytes, bytearray, memoryview)):
        content = bytes(data)
        return Body(
            f"multipart/form-data; boundary={boundary}",
            len(head) + len(content) + len(tail),
            lambda: [head, content, tail],
        )
    if isinstance(data, os.PathLike):
        path = os.fspath(data)
        size = os.path.getsize(path)
        return Body(
            f"multipart/form-data; boundary={boundary}",
            len(head) + size + len(tail),
            lambda: _chain(head, iter_file(path, 0), tail),
        )
    if hasattr(data, "read"):
        seekable = bool(getattr(data, "seekable", lambda: False)())
        if not seekable:
            content = data.read()
            if isinstance(content, str):
                content = content.encode("utf-8")
            return Body(
                f"multipart/form-data; boundary={boundary}",
                len(head) + len(content) + len(tail),
                lambda: [head, content, tail],
            )
        start = data.tell()
        size = data.seek(0, os.SEEK_END) - start
        data.seek(start)
        return Body(
            f"multipart/form-data; boundary={boundary}",
            len(head) + size + len(tail),
            lambda: _chain(head, iter_file(data, start), tail),
        )
    raise TypeError(f"cannot upload a {type(data).__name__}: pass bytes, str, a pathlib.Path or a binary file object")


def _chain(head: bytes, middle: Iterator[bytes], tail: bytes) -> Iterator[bytes]:
    yield head
    yield from middle
    yield tail
