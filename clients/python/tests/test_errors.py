"""The error table: the same rows as the TypeScript client's (``packages/sdk/src/errors.ts``), in the same
order, and what each status, code and kind of operation becomes."""

from __future__ import annotations

import re
import unittest

from _support import ROOT, sandboxd
from sandboxd.errors import ERROR_TABLE, error_for

TS_ERRORS = ROOT.parent.parent / "packages" / "sdk" / "src" / "errors.ts"
KIND_GROUPS = {
    "BROWSER": ("browser", "browser.session.create", "browser.navigate", "browser.element", "browser.render"),
    "BROWSER_SESSION": ("browser", "browser.navigate", "browser.element"),
    "SESSION_OPERATIONS": ("session", "kill", "execute"),
}


def python_rows():
    rows = []
    for rule in ERROR_TABLE:
        status = "≥500" if callable(rule.status) else rule.status
        made = rule.make("m", {"status": 0, "code": None}, {})
        rows.append((status, rule.code, tuple(rule.kinds) if rule.kinds else None, type(made).__name__))
    return rows


class ErrorTable(unittest.TestCase):
    @unittest.skipUnless(TS_ERRORS.exists(), "the TypeScript client is not beside this checkout")
    def test_the_rows_are_the_typescript_clients(self) -> None:
        text = TS_ERRORS.read_text(encoding="utf-8")
        table = text[text.index("export const ERROR_TABLE") : text.index("];", text.index("export const ERROR_TABLE"))]
        rows = []
        for line in table.splitlines():
            match = re.search(r"\{ status: ([^,]+), (?:code: '(\w+)', )?(?:kinds: ([^,]+), )?make: .*new (\w+)\(", line)
            if not match:
                continue
            status_text, code, kinds, name = match.groups()
            status = "≥500" if "=>" in status_text else int(status_text)
            if kinds is None:
                kind_tuple = None
            elif kinds.startswith("["):
                kind_tuple = tuple(re.findall(r"'([\w.]+)'", kinds))
            else:
                kind_tuple = KIND_GROUPS[kinds]
            rows.append((status, code, kind_tuple, name))
        self.assertGreater(len(rows), 10, "the TypeScript table was read")
        self.assertEqual(python_rows(), rows)

    def test_every_class_is_exported_and_a_sandboxd_error(self) -> None:
        for name in sandboxd.errors.__all__:
            value = getattr(sandboxd.errors, name)
            if isinstance(value, type) and issubclass(value, Exception):
                self.assertTrue(issubclass(value, sandboxd.SandboxdError), name)
                self.assertIs(getattr(sandboxd, name), value)

    def test_statuses_codes_and_kinds_pick_the_class(self) -> None:
        cases = [
            ((401, "INVALID_CREDENTIALS", None), sandboxd.AuthenticationError),
            ((403, "FORBIDDEN", "kill"), sandboxd.AuthenticationError),
            ((403, "FORBIDDEN", None), sandboxd.SandboxdError),
            ((404, "NOT_FOUND", "session"), sandboxd.SessionError),
            ((404, "NOT_FOUND", "execute"), sandboxd.SessionError),
            ((404, "NOT_FOUND", None), sandboxd.NotFoundError),
            ((404, "NOT_FOUND", "browser"), sandboxd.BrowserSessionError),
            ((404, "ELEMENT_NOT_FOUND", "browser.element"), sandboxd.ElementNotFoundError),
            ((408, "EXECUTION_TIMEOUT", "execute"), sandboxd.ExecutionError),
            ((408, "BROWSER_TIMEOUT", None), sandboxd.BrowserTimeoutError),
            ((400, "NAVIGATION_FAILED", "browser.navigate"), sandboxd.BrowserNavigationError),
            ((400, "BAD_REQUEST", None), sandboxd.SandboxdError),
            ((409, "CONFLICT", None), sandboxd.SandboxdError),
            ((422, None, None), sandboxd.ValidationError),
            ((429, "RATE_LIMITED", "execute"), sandboxd.RateLimitError),
            ((429, "CAPACITY_BUSY", "execute"), sandboxd.RateLimitError),
            ((429, "QUOTA_EXCEEDED", "execute"), sandboxd.QuotaExceededError),
            ((429, None, "browser.session.create"), sandboxd.QuotaExceededError),
            ((501, "NOT_IMPLEMENTED", None), sandboxd.UnsupportedOperationError),
            ((500, "INTERNAL_ERROR", None), sandboxd.NetworkError),
            ((503, "VM_UNAVAILABLE", None), sandboxd.NetworkError),
        ]
        for (status, code, kind), expected in cases:
            error = error_for(status, code, kind, "message")
            self.assertIs(type(error), expected, (status, code, kind))
            self.assertEqual((error.status, error.code, str(error)), (status, code, "message"))
        self.assertIsInstance(error_for(404, "ELEMENT_NOT_FOUND", None, "m"), sandboxd.BrowserError)
        facts = {"retry_after": 12.0, "selector": "#x", "detail": [{"loc": ["body"], "msg": "m", "type": "t"}]}
        self.assertEqual(error_for(429, "RATE_LIMITED", None, "m", facts=facts).retry_after, 12.0)
        self.assertEqual(error_for(404, "ELEMENT_NOT_FOUND", None, "m", facts=facts).selector, "#x")
        self.assertEqual(error_for(422, None, None, "m", facts=facts).detail, facts["detail"])

    def test_errors_survive_pickling(self) -> None:
        import pickle

        original = sandboxd.TemplateBuildFailedError("failed at pull", template_id="tpl_1", step="pull", status=None)
        copy = pickle.loads(pickle.dumps(original))
        self.assertIs(type(copy), sandboxd.TemplateBuildFailedError)
        self.assertEqual((str(copy), copy.template_id, copy.step), ("failed at pull", "tpl_1", "pull"))
        limited = pickle.loads(pickle.dumps(error_for(429, "RATE_LIMITED", None, "m", facts={"retry_after": 3.0})))
        self.assertEqual((limited.retry_after, limited.status, limited.code), (3.0, 429, "RATE_LIMITED"))


if __name__ == "__main__":
    unittest.main()
