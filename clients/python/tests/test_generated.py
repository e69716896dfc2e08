"""What is generated stays generated: the sync client is exactly what ``scripts/unasync.py`` makes of the
asyncio client; every operation of the served document (``models.OPERATIONS``) has a method; the sources
are Python 3.9; the models resolve."""

from __future__ import annotations

import ast
import importlib.util
import re
import typing
import unittest
from pathlib import Path

from _support import ROOT, models, sandboxd

SCRIPTS = ROOT / "scripts"
SOURCES = ROOT / "src" / "sandboxd"

#: Operations the client reaches otherwise, or leaves out on purpose, with why.
NOT_CALLED_BY_NAME = {
    "GET /v1/sessions/{session_id}/pty/sessions/{pty_id}/connect": "terminals.attach (a WebSocket)",
    "GET /v1/vms/{vm_id}/pty/sessions/{pty_id}/connect": "terminals.attach (a WebSocket)",
    "GET /v1/computeruse/{session_id}/vnc/websockify": "the VNC WebSocket of the viewer (viewer_url), for browsers",
    "* /v1/computeruse/{session_id}/{path}": "computer_use.request, action, screenshot (the proxy to the VM)",
    "* /v1/app/{session_id}/{port}": "the preview proxy: the apps in the VM, reached with any HTTP client",
    "* /v1/app/{session_id}/{port}/{path}": "the preview proxy",
    "POST /v1/upload": "files.upload uses POST /upload, the same operation",
    "POST /execute_async": "execute_async uses POST /v1/execute_async, the same operation",
    "* /mcp": "the Model Context Protocol endpoint (JSON-RPC), for MCP clients rather than this library",
    "POST /workers/{worker_id}/drain": "worker control for operators, not API users (as in the TypeScript client)",
    "POST /workers/{worker_id}/undrain": "worker control for operators",
    "POST /workers/{worker_id}/deployment-drain/{action}": "worker control for operators",
    "POST /v1/auth/session": "the web console's cookie sign-in, for browsers (the library sends a key or a token)",
    "GET /v1/auth/session": "the web console's cookie session, for browsers",
    "DELETE /v1/auth/session": "the web console's sign-out, for browsers",
}


def load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def operations_called() -> typing.Set[str]:
    """``METHOD /path`` of every request the asyncio client's sources make by a literal path."""
    called = set()
    for path in (SOURCES / "_async").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for method, route in re.findall(r'request\(\s*"(GET|POST|PUT|PATCH|DELETE|HEAD)",\s*"([^"]+)"', text):
            called.add(f"{method} {route}")
        for route in re.findall(r'interact\(\s*"(/v1/browser/interactions/[^"]+)"', text):
            called.add(f"POST {route}")
    return called


class Generated(unittest.TestCase):
    def test_the_sync_client_is_generated_from_the_asyncio_client(self) -> None:
        unasync = load_script("unasync")
        stale = [
            str(path.relative_to(ROOT))
            for path, text in unasync.generated().items()
            if not path.exists() or path.read_text(encoding="utf-8") != text
        ]
        self.assertEqual(stale, [], "run python3 clients/python/scripts/unasync.py and commit the result")

    def test_every_operation_of_the_document_has_a_method(self) -> None:
        called = operations_called()
        missing = []
        for operation in models.OPERATIONS:
            method, route = operation.split(" ", 1)
            if operation in called or operation in NOT_CALLED_BY_NAME or f"* {route}" in NOT_CALLED_BY_NAME:
                continue
            missing.append(operation)
        self.assertEqual(missing, [], "operations of the served document that the client has no method for")
        unknown = sorted(op for op in called if op not in models.OPERATIONS)
        self.assertEqual(unknown, [], "the client calls operations the document does not have")

    def test_the_sources_are_python_3_9(self) -> None:
        for path in sorted(list(SOURCES.rglob("*.py")) + list(SCRIPTS.glob("*.py"))):
            source = path.read_text(encoding="utf-8")
            ast.parse(source, filename=str(path), feature_version=(3, 9))
            # `X | Y` is evaluated at run time outside annotations: 3.10+ only.
            tree = ast.parse(source)
            for node in ast.walk(tree):
                if isinstance(node, (ast.Assign, ast.Call)):
                    for child in ast.walk(node):
                        if isinstance(child, ast.BinOp) and isinstance(child.op, ast.BitOr):
                            names = [
                                n
                                for n in (child.left, child.right)
                                if isinstance(n, (ast.Name, ast.Subscript, ast.Constant))
                            ]
                            if len(names) == 2 and any(isinstance(n, ast.Constant) and n.value is None for n in names):
                                self.fail(f"{path}:{child.lineno}: X | None at run time needs Python 3.10")

    def test_the_models_resolve(self) -> None:
        count = 0
        for name, value in vars(models).items():
            if isinstance(value, type) and issubclass(value, sandboxd.Model) and value is not sandboxd.Model:
                value.model_fields()  # the annotations resolve
                self.assertLessEqual(value.model_required_keys(), set(value.model_fields()), name)
                count += 1
            elif isinstance(value, type) and hasattr(value, "__required_keys__"):
                typing.get_type_hints(value)  # a TypedDict (request bodies)
                count += 1
        self.assertGreater(count, 100)
        for request_type, response_type in models.OPERATIONS.values():
            for name in (request_type, response_type):
                if name is not None:
                    self.assertTrue(hasattr(models, name), name)


class Packaging(unittest.TestCase):
    def test_the_readmes_first_example_is_the_typed_example_that_mypy_checks(self) -> None:
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        block = re.search(r"```python\n(.*?)```", readme, flags=re.S)
        assert block is not None
        example = (ROOT / "examples" / "typed_usage.py").read_text(encoding="utf-8")
        code = example.split('"""', 2)[2].lstrip("\n")  # after the docstring
        self.assertEqual(block.group(1), code, "keep README.md's first block and examples/typed_usage.py the same")

    def test_the_version_is_one(self) -> None:
        text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
        self.assertIn('version = { attr = "sandboxd._version.VERSION" }', text)
        self.assertTrue((SOURCES / "py.typed").exists())
        self.assertFalse(Path(SOURCES / "models.py").read_text(encoding="utf-8").count("\r"))


if __name__ == "__main__":
    unittest.main()
