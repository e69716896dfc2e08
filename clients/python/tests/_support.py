"""Shared by the tests: the package under test, the live server's settings, and a check of answers against
the TypedDicts generated from the served OpenAPI document.

The package comes from ``../src`` unless ``SANDBOXD_TEST_INSTALLED=1`` (then from wherever it is installed,
as in the wheel test). The live tests run when ``SANDBOXD_URL`` and ``SANDBOXD_API_KEY`` name a server
(``packages/server/test/clients/python-client.test.ts`` starts one with real VMs); ``SANDBOXD_TEST_TINY_API_KEY``
is a user on a plan of 3 executions a minute and 1 VM, ``SANDBOXD_TEST_OTHER_API_KEY`` another user, and
``SANDBOXD_TEST_USERNAME``/``SANDBOXD_TEST_PASSWORD`` the main user's login (for bearer tokens), and
``SANDBOXD_TEST_EGRESS_ENFORCED=1`` says the server enforces egress (it then accepts ``vault_ids``; else 503).
"""

from __future__ import annotations

import os
import sys
import typing
import unittest
from pathlib import Path
from typing import Any, Dict, Optional

ROOT = Path(__file__).resolve().parent.parent
if os.environ.get("SANDBOXD_TEST_INSTALLED") != "1":
    sys.path.insert(0, str(ROOT / "src"))

import sandboxd  # noqa: E402
from sandboxd import models  # noqa: E402

URL = os.environ.get("SANDBOXD_URL") or ""
API_KEY = os.environ.get("SANDBOXD_API_KEY") or ""
TINY_API_KEY = os.environ.get("SANDBOXD_TEST_TINY_API_KEY") or ""
OTHER_API_KEY = os.environ.get("SANDBOXD_TEST_OTHER_API_KEY") or ""
#: The first execute of a session starts its VM (a restore: ~1 s with KVM, longer under TCG).
FIRST_CALL_TIMEOUT = 180.0

live = unittest.skipUnless(URL and API_KEY, "set SANDBOXD_URL and SANDBOXD_API_KEY to run against a server")


def client(**options: Any) -> sandboxd.Sandboxd:
    return sandboxd.Sandboxd(api_key=options.pop("api_key", API_KEY), base_url=URL, **options)


def async_client(**options: Any) -> sandboxd.AsyncSandboxd:
    return sandboxd.AsyncSandboxd(api_key=options.pop("api_key", API_KEY), base_url=URL, **options)


def mismatch(value: Any, annotation: Any, where: str = "answer") -> Optional[str]:
    """Why ``value`` does not fit ``annotation`` (a type of ``sandboxd.models``), or None when it does.

    A model must be an instance of its class (the client made the answer into it), have its required keys and
    no key it does not declare: a field the server added or dropped without ``models.py`` being regenerated is
    caught here, on real answers. A TypedDict the same, as a plain dict.
    """
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is Any:
        return None
    if annotation is None or annotation is type(None):
        return None if value is None else f"{where}: expected null, got {value!r}"[:300]
    if origin is typing.Union:
        reasons = [mismatch(value, option, where) for option in args]
        return None if any(r is None for r in reasons) else " / ".join(r for r in reasons if r)[:600]
    if origin is typing.Literal:
        return None if value in args else f"{where}: {value!r} is not one of {args}"
    if origin in (list, typing.List):
        if not isinstance(value, list):
            return f"{where}: expected a list, got {type(value).__name__}"
        for i, item in enumerate(value):
            reason = mismatch(item, args[0] if args else Any, f"{where}[{i}]")
            if reason:
                return reason
        return None
    if origin in (dict, typing.Dict):
        if not isinstance(value, dict):
            return f"{where}: expected an object, got {type(value).__name__}"
        for key, item in value.items():
            reason = mismatch(item, args[1] if args else Any, f"{where}.{key}")
            if reason:
                return reason
        return None
    if isinstance(annotation, type) and issubclass(annotation, sandboxd.Model):
        if not isinstance(value, annotation):
            return f"{where}: expected a {annotation.__name__} object, got {type(value).__name__}"[:300]
        fields = annotation.model_fields()
        missing = sorted(k for k in annotation.model_required_keys() if k not in value)
        unknown = sorted(k for k in value if k not in fields)
        if missing or unknown:
            return f"{where} ({annotation.__name__}): missing {missing}, not in the model {unknown}"
        for key in value:
            reason = mismatch(value[key], fields[key], f"{where}.{key}")
            if reason:
                return reason
        return None
    if isinstance(annotation, type) and hasattr(annotation, "__required_keys__"):
        if not isinstance(value, dict):
            return f"{where}: expected {annotation.__name__}, got {type(value).__name__}"
        hints: Dict[str, Any] = typing.get_type_hints(annotation)
        missing = sorted(k for k in annotation.__required_keys__ if k not in value)  # type: ignore[attr-defined]
        unknown = sorted(k for k in value if k not in hints)
        if missing or unknown:
            return f"{where} ({annotation.__name__}): missing {missing}, not in the model {unknown}"
        for key, item in value.items():
            reason = mismatch(item, hints[key], f"{where}.{key}")
            if reason:
                return reason
        return None
    if annotation is float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        return None if ok else f"{where}: expected a number, got {value!r}"[:300]
    if annotation is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
        return None if ok else f"{where}: expected an integer, got {value!r}"[:300]
    if isinstance(annotation, type):
        return (
            None if isinstance(value, annotation) else f"{where}: expected {annotation.__name__}, got {value!r}"[:300]
        )
    return None


class ShapeAssertions(unittest.TestCase):
    def assertShape(self, value: Any, annotation: Any) -> None:  # noqa: N802 (unittest style)
        reason = mismatch(value, annotation)
        if reason:
            self.fail(f"the answer does not match sandboxd.models: {reason}")


__all__ = [
    "ROOT",
    "URL",
    "API_KEY",
    "TINY_API_KEY",
    "OTHER_API_KEY",
    "FIRST_CALL_TIMEOUT",
    "live",
    "client",
    "async_client",
    "mismatch",
    "ShapeAssertions",
    "sandboxd",
    "models",
]
