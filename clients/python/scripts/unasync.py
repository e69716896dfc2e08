#!/usr/bin/env python3
"""Generates the sync client (``src/sandboxd/_sync/``) from the asyncio client (``src/sandboxd/_async/``).

    python3 clients/python/scripts/unasync.py            write the generated files
    python3 clients/python/scripts/unasync.py --check    exit 1 if any is stale

The two clients have one source: the asyncio one. The sync one is the same code with ``async``/``await``
taken away and the asyncio names turned into their sync counterparts (the approach of python-trio's
``unasync``, which httpcore uses). The rewriting is done on tokens, so only code names change; in strings and
comments only the class names and "await " are rewritten. A line ending in ``# async only`` is left out.
Files whose name starts with an underscore (``_backend.py``, ``_terminal.py``, ``_streams.py``) are written
by hand in both folders: they are where the two clients really differ (threads and sockets against asyncio).
A test (``tests/test_generated.py``) fails while a generated file differs from what this script makes.
"""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path
from typing import Dict, List, Tuple

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "sandboxd"
SOURCE = PACKAGE / "_async"
TARGET = PACKAGE / "_sync"

#: Names in code, asyncio → sync.
NAMES: Dict[str, str] = {
    "AsyncSandboxd": "Sandboxd",
    "AsyncSession": "Session",
    "AsyncTransport": "Transport",
    "AsyncExecutionRun": "ExecutionRun",
    "AsyncTerminalConnection": "TerminalConnection",
    "AsyncEventStream": "EventStream",
    "AsyncProcessEventStream": "ProcessEventStream",
    "AsyncFileWatchStream": "FileWatchStream",
    "AsyncRunEventStream": "RunEventStream",
    "AsyncCommandHandle": "CommandHandle",
    "AsyncCommands": "Commands",
    "AsyncStreamedResponse": "StreamedResponse",
    "AsyncClient": "Client",
    "aiter_bytes": "iter_bytes",
    "AsyncIterable": "Iterable",
    "AsyncBrowserSession": "BrowserSession",
    "AsyncDesktop": "Desktop",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "__aiter__": "__iter__",
    "__anext__": "__next__",
    "StopAsyncIteration": "StopIteration",
    "aclose": "close",
    "AsyncIterator": "Iterator",
}
#: In strings and comments: the class names, and "await " / "async with" / "async for".
TEXT = [(re.compile(rf"\b{re.escape(a)}\b"), b) for a, b in NAMES.items() if a[0].isupper()] + [
    (re.compile(r"\bawait "), ""),
    (re.compile(r"\baclose\(\)"), "close()"),
    (re.compile(r"\basync (with|for)\b"), r"\1"),
    (re.compile(r"\basyncio client\b"), "sync client"),
    (re.compile(r"\bThe asyncio client\b"), "The sync client"),
    (re.compile(r"\(asyncio\)"), "(sync)"),
]
ASYNC_ONLY = re.compile(r"^.*#\s*async only\s*$\n?", re.MULTILINE)


def header(relative: str) -> str:
    return f"# Generated from sandboxd/_async/{relative} by scripts/unasync.py: do not edit.\n"


def unasync(source: str) -> str:
    """The sync version of an asyncio module's source."""
    source = ASYNC_ONLY.sub("", source)
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(position: Tuple[int, int]) -> int:
        return starts[position[0] - 1] + position[1]

    edits: List[Tuple[int, int, str]] = []
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    for index, token in enumerate(tokens):
        start, end = offset(token.start), offset(token.end)
        if token.type == tokenize.NAME:
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if token.string == "async" and following is not None and following.string in ("def", "for", "with"):
                edits.append((start, offset(following.start), ""))
            elif token.string == "await":
                edits.append((start, offset(following.start) if following is not None else end, ""))
            elif token.string in NAMES:
                edits.append((start, end, NAMES[token.string]))
        elif token.type in (tokenize.STRING, tokenize.COMMENT):
            text = token.string
            for pattern, replacement in TEXT:
                text = pattern.sub(replacement, text)
            if text != token.string:
                edits.append((start, end, text))
    for start, end, text in sorted(edits, reverse=True):
        source = source[:start] + text + source[end:]
    return source


def generated() -> Dict[Path, str]:
    """Every generated file of ``_sync/`` and its text."""
    files: Dict[Path, str] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        relative = path.relative_to(SOURCE)
        if relative.name.startswith("_") and relative.name != "__init__.py":
            continue  # written by hand on both sides
        files[TARGET / relative] = header(relative.as_posix()) + unasync(path.read_text(encoding="utf-8"))
    return files


def main(argv: List[str]) -> int:
    stale = []
    for path, text in generated().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        stale.append(path)
        if "--check" not in argv:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if "--check" in argv:
        for path in stale:
            print(f"{path.relative_to(PACKAGE.parent.parent)} is stale: run scripts/unasync.py", file=sys.stderr)
        return 1 if stale else 0
    print(f"wrote {len(stale)} file(s) of {TARGET.relative_to(PACKAGE.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
