"""sandboxd: the Python client of sandboxd (Python 3.9+, on httpx and websockets).

    from sandboxd import Sandboxd

    client = Sandboxd(api_key="sbx_sk_…", base_url="http://127.0.0.1:8080")
    session = client.sessions.create(vcpu_count=2)
    print(session.execute("print(1)").stdout)

``AsyncSandboxd`` has the same surface for asyncio (``await client.sessions.create()``…).
"""

from ._async.client import AsyncSandboxd
from ._async.resources.browser import AsyncBrowserSession
from ._async.resources.commands import AsyncCommandHandle, AsyncCommands
from ._async.resources.computer_use import AsyncDesktop
from ._async.resources.executions import AsyncExecutionRun
from ._async.session import AsyncSession
from ._async._streams import AsyncEventStream, AsyncFileWatchStream, AsyncProcessEventStream
from ._async._terminal import AsyncTerminalConnection, TerminalExit
from ._async.transport import AsyncTransport
from ._command_result import CommandResult
from ._connection import VerifyTypes
from ._model import Model
from ._pkce import PkcePair, code_challenge_of, create_pkce_pair
from ._sse import StreamedEvent
from ._sync.client import (
    DEFAULT_BASE_URL,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_RETRY_DELAY,
    DEFAULT_TIMEOUT,
    Sandboxd,
)
from ._sync.resources.browser import BrowserImage, BrowserSession, screenshot_image
from ._sync.resources.commands import CommandHandle, Commands
from ._sync.resources.computer_use import Desktop
from ._sync.resources.execution import DEFAULT_EXECUTE_TIMEOUT_SECONDS
from ._sync.resources.executions import ExecutionRun
from ._sync.session import Session
from ._sync._streams import EventStream, FileWatchStream, ProcessEventStream
from ._sync._terminal import TerminalConnection
from ._sync.transport import Transport
from ._version import VERSION
from .errors import (
    ERROR_TABLE,
    AuthenticationError,
    BrowserError,
    BrowserInteractionError,
    BrowserNavigationError,
    BrowserSessionError,
    BrowserTimeoutError,
    CommandExitError,
    ElementNotFoundError,
    ExecutionError,
    NetworkError,
    NotFoundError,
    QuotaExceededError,
    RateLimitError,
    SandboxdError,
    SessionError,
    TemplateBuildFailedError,
    UnsupportedOperationError,
    ValidationError,
    error_for,
)

__version__ = VERSION

__all__ = [
    "Sandboxd",
    "AsyncSandboxd",
    "Session",
    "AsyncSession",
    "ExecutionRun",
    "AsyncExecutionRun",
    "TerminalConnection",
    "AsyncTerminalConnection",
    "TerminalExit",
    "Commands",
    "AsyncCommands",
    "CommandHandle",
    "AsyncCommandHandle",
    "CommandResult",
    "EventStream",
    "AsyncEventStream",
    "ProcessEventStream",
    "AsyncProcessEventStream",
    "FileWatchStream",
    "AsyncFileWatchStream",
    "StreamedEvent",
    "Model",
    "VerifyTypes",
    "BrowserSession",
    "AsyncBrowserSession",
    "BrowserImage",
    "screenshot_image",
    "Desktop",
    "AsyncDesktop",
    "Transport",
    "AsyncTransport",
    "PkcePair",
    "create_pkce_pair",
    "code_challenge_of",
    "DEFAULT_BASE_URL",
    "DEFAULT_TIMEOUT",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_RETRY_DELAY",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_EXECUTE_TIMEOUT_SECONDS",
    "VERSION",
    "__version__",
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
    "ERROR_TABLE",
    "error_for",
]
