"""What of an app's folder is deployed, and the folder packed as a gzipped tar (``tarfile``): everything but
``.git``, ``node_modules``, ``__pycache__`` and what the folder's ``.sandboxdignore`` lists, in gitignore's pattern
language without its escapes (``#`` comments, ``!`` re-includes, a trailing ``/`` matches directories only, a
``/`` elsewhere anchors the pattern at the folder, ``*``, ``?``, ``[…]`` and ``**``). The same rules as the
TypeScript client's (``packages/sdk/src/app-folder.ts``) and ``sandbox deploy``'s, so all three send the same files.
"""

from __future__ import annotations

import io
import os
import re
import tarfile
from typing import Callable, List, Pattern, Tuple

#: Left out of every deployment, at any depth.
ALWAYS_IGNORED = (".git", "node_modules", "__pycache__")
#: The ignore file read at the folder's root.
APP_IGNORE_FILE = ".sandboxdignore"
#: The manifest's names, in the order they are looked for.
APP_MANIFEST_FILES = ("sandboxd.yaml", "sandboxd.yml", "instavm.yaml", "instavm.yml")


def _glob_to_regex(glob: str, anchored: bool) -> Pattern[str]:
    source = ""
    i = 0
    while i < len(glob):
        c = glob[i]
        if c == "*" and glob[i + 1 : i + 2] == "*":
            if glob[i + 2 : i + 3] == "/":
                source += "(?:.*/)?"
                i += 3
            else:
                source += ".*"
                i += 2
            continue
        if c == "*":
            source += "[^/]*"
        elif c == "?":
            source += "[^/]"
        elif c == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                source += "\\["
            else:
                inside = glob[i + 1 : end]
                if inside.startswith("!"):
                    inside = "^" + inside[1:]
                source += "[" + inside.replace("\\", "\\\\") + "]"
                i = end
        else:
            source += re.escape(c)
        i += 1
    return re.compile("^" + ("" if anchored else "(?:.*/)?") + source + "$")


def app_ignore_matcher(text: str = "") -> Callable[[str, bool], bool]:
    """``(relative_path, is_directory) -> left out?`` for the rules of an ignore file's ``text``."""
    rules: List[Tuple[bool, bool, Pattern[str]]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        directory_only = line.endswith("/")
        line = line.rstrip("/")
        anchored = "/" in line
        line = line.lstrip("/")
        if line:
            rules.append((negate, directory_only, _glob_to_regex(line, anchored)))

    def ignored(relative_path: str, is_directory: bool) -> bool:
        path = relative_path.replace(os.sep, "/").strip("/")
        if path.rsplit("/", 1)[-1] in ALWAYS_IGNORED:
            return True
        result = False
        for negate, directory_only, regex in rules:
            if directory_only and not is_directory:
                continue
            if regex.match(path):
                result = not negate
        return result

    return ignored


def list_app_folder(folder: "os.PathLike[str] | str") -> List[str]:
    """The folder's files and directories to deploy, relative, ``/``-separated, parents before what they hold."""
    root = os.fspath(folder)
    ignore_path = os.path.join(root, APP_IGNORE_FILE)
    text = ""
    if os.path.isfile(ignore_path):
        with open(ignore_path, encoding="utf-8") as f:
            text = f.read()
    ignored = app_ignore_matcher(text)
    found: List[str] = []

    def walk(relative: str) -> None:
        with os.scandir(os.path.join(root, relative) if relative else root) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                path = f"{relative}/{entry.name}" if relative else entry.name
                is_dir = entry.is_dir(follow_symlinks=False)
                if ignored(path, is_dir):
                    continue
                found.append(path)
                if is_dir:
                    walk(path)

    walk("")
    return found


def pack_app_folder(folder: "os.PathLike[str] | str") -> bytes:
    """The folder as a gzipped tar, its manifest at the root (a ``ValueError`` when it has none)."""
    root = os.fspath(folder)
    if not os.path.isdir(root):
        raise ValueError(f"{root} is not a folder")
    if not any(os.path.isfile(os.path.join(root, name)) for name in APP_MANIFEST_FILES):
        raise ValueError(
            f"no sandboxd.yaml in {root}: an app needs a manifest at its root with at least port: and start:"
        )
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path in list_app_folder(root):
            info = archive.gettarinfo(os.path.join(root, path), arcname=path)
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if info.isfile():
                with open(os.path.join(root, path), "rb") as f:
                    archive.addfile(info, f)
            else:
                archive.addfile(info)
    return buffer.getvalue()
