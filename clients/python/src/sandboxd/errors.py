"""Exceptions of the client, and the one table that maps an HTTP status and the server's ``code`` (and, where
the meaning depends on it, the kind of operation) to a class.

It is the table of the TypeScript client (``packages/sdk/src/errors.ts``), row for row, with the same class
names; attributes are snake_case (``retry_after``, ``execution_id``, ``request_id``).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Union

from ._command_result import CommandResult

__all__ = [
    "SandboxdError",
    "AuthenticationError",
    "RateLimitError",
    "QuotaExceededError",
    "NetworkError",
    "ExecutionError",
    "CommandExitError",
    "SessionError",
    "NotFoundError",
    "ValidationError",
    "UnsupportedOperationError",
    "TemplateBuildFailedError",
    "BrowserError",
    "BrowserSessionError",
    "BrowserInteractionError",
    "BrowserTimeoutError",
    "BrowserNavigationError",
    "ElementNotFoundError",
    "ErrorRule",
    "ERROR_TABLE",
    "OPERATION_KINDS",
    "error_for",
]


class SandboxdError(Exception):
    """Base class of every error the client raises.

    ``status`` is the HTTP status when the server answered, ``code`` its stable error code (docs/errors.md),
    ``body`` the parsed answer, ``request_id`` the server's ``x-request-id`` (to find its log line) and
    ``operation`` the request ("POST /execute").
    """

    def __init__(
        self,
        message: str,
        *,
        status: Optional[int] = None,
        code: Optional[str] = None,
        body: Any = None,
        request_id: Optional[str] = None,
        operation: Optional[str] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.body = body
        self.request_id = request_id
        self.operation = operation

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> Any:
        # Keyword-only fields: rebuilt from the instance's attributes, so errors cross process boundaries.
        return (_rebuild, (type(self), self.message, dict(self.__dict__)))

    def __repr__(self) -> str:
        facts = ", ".join(f"{k}={v!r}" for k, v in (("status", self.status), ("code", self.code)) if v is not None)
        return f"{type(self).__name__}({self.message!r}{', ' + facts if facts else ''})"


def _rebuild(cls: type, message: str, state: Dict[str, Any]) -> "SandboxdError":
    error: SandboxdError = Exception.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


class AuthenticationError(SandboxdError):
    """401: missing, wrong, expired or deleted API key (and 403 on kill, as the original clients do)."""


class RateLimitError(SandboxdError):
    """429 RATE_LIMITED or CAPACITY_BUSY: nothing ran; wait ``retry_after`` seconds (the client retries it)."""

    def __init__(self, message: str, *, retry_after: Optional[float] = None, **options: Any) -> None:
        super().__init__(message, **options)
        #: Seconds to wait before trying again (from ``Retry-After`` or the body), when the server said.
        self.retry_after = retry_after


class QuotaExceededError(SandboxdError):
    """429 QUOTA_EXCEEDED: the plan's concurrent VMs or vCPUs are used up; kill a VM first."""


class NetworkError(SandboxdError):
    """No usable answer: connection failures, time-outs (``timed_out``), and server errors (≥ 500)."""

    def __init__(self, message: str, *, timed_out: bool = False, **options: Any) -> None:
        super().__init__(message, **options)
        #: True when the client gave up waiting (its ``timeout``).
        self.timed_out = timed_out


class ExecutionError(SandboxdError):
    """A run that did not finish well: 408 EXECUTION_TIMEOUT (the run goes on: wait for ``execution_id``), or a
    failed run when the caller asked for errors (``raise_on_error=True``)."""

    def __init__(
        self,
        message: str,
        *,
        execution_id: Optional[int] = None,
        session_id: Optional[str] = None,
        exit_code: Optional[int] = None,
        stdout: Optional[str] = None,
        stderr: Optional[str] = None,
        **options: Any,
    ) -> None:
        super().__init__(message, **options)
        self.execution_id = execution_id
        self.session_id = session_id
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr


class CommandExitError(ExecutionError):
    """A command of ``session.commands`` that did not exit 0 (E2B's ``CommandExitException``): a non-zero exit
    code, or -1 when a signal ended it (killed, timed out) or its VM went away. ``result`` is its
    ``CommandResult``; ``exit_code``, ``stdout``, ``stderr``, ``error``, ``signal``, ``pid`` and ``process_id``
    are its fields."""

    def __init__(self, result: CommandResult, **options: Any) -> None:
        lines = result.stderr.strip().split("\n")
        why = result.error or (lines[-1] if lines[-1] else "")
        super().__init__(
            f"command {result.process_id} exited with code {result.exit_code}" + (f": {why}" if why else ""),
            exit_code=result.exit_code,
            stdout=result.stdout,
            stderr=result.stderr,
            **options,
        )
        self.result = result
        self.error = result.error
        self.signal = result.signal
        self.pid = result.pid
        self.process_id = result.process_id


class SessionError(SandboxdError):

    """404 on an operation of a session (execute, files, status, kill): no such session, or no VM."""


class NotFoundError(SandboxdError):
    """404 on anything else (including a missing file on download)."""


class ValidationError(SandboxdError):
    """422: the request did not validate; ``detail`` lists each problem (``[{loc, msg, type}]``)."""

    def __init__(self, message: str, *, detail: Optional[List[Dict[str, Any]]] = None, **options: Any) -> None:
        super().__init__(message, **options)
        self.detail: List[Dict[str, Any]] = list(detail or [])


class UnsupportedOperationError(SandboxdError):
    """501 NOT_IMPLEMENTED: the server lists the operation but does not do it (yet)."""


class TemplateBuildFailedError(SandboxdError):
    """A template build ended ``failed`` (a job the client waited for, not an HTTP error); the message has the
    server's reason: the step it failed in, what happened and the last lines that step printed."""

    def __init__(self, message: str, *, template_id: str, step: Optional[str] = None, **options: Any) -> None:
        super().__init__(message, **options)
        self.template_id = template_id
        self.step = step


class BrowserError(SandboxdError):
    """Base of the browser automation errors (``client.browser``)."""


class BrowserSessionError(BrowserError):
    """404 on an operation of a browser session: it is closed, expired, or not yours."""


class BrowserInteractionError(BrowserError):
    """An interaction with the page failed (see ElementNotFoundError)."""


class BrowserTimeoutError(BrowserError):
    """408 BROWSER_TIMEOUT: a navigation, wait, interaction or render ran past its timeout; the session stays usable."""


class BrowserNavigationError(BrowserError):
    """400 NAVIGATION_FAILED: the page could not be loaded (DNS, refused, TLS, a scheme not allowed)."""


class ElementNotFoundError(BrowserInteractionError):
    """404 ELEMENT_NOT_FOUND: an interaction's selector matched nothing within its timeout."""

    def __init__(self, message: str, *, selector: Optional[str] = None, **options: Any) -> None:
        super().__init__(message, **options)
        self.selector = selector


# What an operation is, where the same status means different things: a 404 on a session's operation is a
# SessionError, 403 on kill an AuthenticationError, a 404 on a browser interaction a BrowserSessionError.
OPERATION_KINDS = (
    "session",
    "kill",
    "execute",
    "browser",
    "browser.session.create",
    "browser.navigate",
    "browser.element",
    "browser.render",
)

_BROWSER = ("browser", "browser.session.create", "browser.navigate", "browser.element", "browser.render")
# The browser operations that name a session (a 404 there: the session is not open, or not yours).
_BROWSER_SESSION = ("browser", "browser.navigate", "browser.element")
_SESSION_OPERATIONS = ("session", "kill", "execute")

Facts = Dict[str, Any]
Maker = Callable[[str, Dict[str, Any], Facts], SandboxdError]


class ErrorRule(NamedTuple):
    """One row: the first row whose status, code and kinds match the answer decides the class."""

    status: Union[int, Callable[[int], bool]]
    code: Optional[str]
    kinds: Optional[Sequence[str]]
    make: Maker


def _pick(facts: Facts, *keys: str) -> Dict[str, Any]:
    return {key: facts[key] for key in keys if facts.get(key) is not None}


#: THE table (the TypeScript client's ``ERROR_TABLE``, in the same order).
ERROR_TABLE: Sequence[ErrorRule] = (
    ErrorRule(400, "NAVIGATION_FAILED", None, lambda m, o, f: BrowserNavigationError(m, **o)),
    ErrorRule(401, None, None, lambda m, o, f: AuthenticationError(m, **o)),
    ErrorRule(403, None, ("kill",), lambda m, o, f: AuthenticationError(m, **o)),
    ErrorRule(404, "ELEMENT_NOT_FOUND", None, lambda m, o, f: ElementNotFoundError(m, **o, **_pick(f, "selector"))),
    ErrorRule(404, None, _BROWSER_SESSION, lambda m, o, f: BrowserSessionError(m, **o)),
    ErrorRule(404, None, _SESSION_OPERATIONS, lambda m, o, f: SessionError(m, **o)),
    ErrorRule(404, None, None, lambda m, o, f: NotFoundError(m, **o)),
    ErrorRule(
        408,
        "EXECUTION_TIMEOUT",
        None,
        lambda m, o, f: ExecutionError(m, **o, **_pick(f, "execution_id", "session_id")),
    ),
    ErrorRule(408, "BROWSER_TIMEOUT", None, lambda m, o, f: BrowserTimeoutError(m, **o)),
    ErrorRule(408, None, _BROWSER, lambda m, o, f: BrowserTimeoutError(m, **o)),
    ErrorRule(422, None, None, lambda m, o, f: ValidationError(m, **o, detail=f.get("detail") or [])),
    ErrorRule(429, "QUOTA_EXCEEDED", None, lambda m, o, f: QuotaExceededError(m, **o)),
    ErrorRule(429, None, ("browser.session.create",), lambda m, o, f: QuotaExceededError(m, **o)),
    ErrorRule(429, None, None, lambda m, o, f: RateLimitError(m, **o, **_pick(f, "retry_after"))),
    ErrorRule(501, None, None, lambda m, o, f: UnsupportedOperationError(m, **o)),
    ErrorRule(lambda s: s >= 500, None, None, lambda m, o, f: NetworkError(m, **o)),
)


def error_for(
    status: int,
    code: Optional[str],
    kind: Optional[str],
    message: str,
    *,
    facts: Optional[Facts] = None,
    **options: Any,
) -> SandboxdError:
    """The error for an answer, from the table; anything it does not list is a plain SandboxdError.

    ``facts`` are what the answer says beyond status and code: ``retry_after``, ``detail``, ``execution_id``,
    ``session_id``, ``selector``. ``options`` are the SandboxdError fields (``body``, ``request_id``…).
    """
    facts = facts or {}
    options = {"status": status, "code": code, **options}
    for rule in ERROR_TABLE:
        matches = rule.status(status) if callable(rule.status) else rule.status == status
        if not matches:
            continue
        if rule.code is not None and rule.code != code:
            continue
        if rule.kinds is not None and (kind is None or kind not in rule.kinds):
            continue
        return rule.make(message, options, facts)
    return SandboxdError(message, **options)
