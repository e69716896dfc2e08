"""Reading an answer: a success into the value the caller asked for, a failure into the error it raises and
whether it may be retried (``Failure.retryable``, used by ``_http.retry_delay``).

Apart from ``_http`` so that each module has one job: ``_http`` makes the attempt and decides on retries, this
one interprets what came back.
"""

from __future__ import annotations

import base64
import binascii
import email.utils
import json as jsonlib
import math
import re
import time
from dataclasses import dataclass
from typing import Any, Dict, Optional, Protocol

import httpx

from . import models
from ._model import convert
from .errors import SandboxdError, error_for


class AnsweredRequest(Protocol):
    """What reading an answer needs of the request (``_http.Request`` has it)."""

    kind: Optional[str]
    response_type: str
    sink: Optional[Any]

    @property
    def operation_key(self) -> str:
        ...


#: How much of a body is read or written at a time.
CHUNK_BYTES = 64 * 1024

# "always": retry any request; "idempotent": only one that is safe to send twice; "never".
Retryable = str


@dataclass
class Success:
    value: Any


@dataclass
class Failure:
    error: BaseException
    retryable: Retryable
    retry_after: Optional[float] = None


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds, from delta-seconds or an HTTP date."""
    if not value:
        return None
    text = value.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    return float(max(0, math.ceil(when.timestamp() - (time.time() if now is None else now))))


def streams_to_sink(response: httpx.Response, request: AnsweredRequest) -> bool:
    """Whether a 2xx answer's body goes to the request's sink chunk by chunk as it arrives (a raw download)."""
    content_type = response.headers.get("content-type", "")
    return request.response_type == "bytes" and request.sink is not None and "application/json" not in content_type


def typed(request: AnsweredRequest, value: Any) -> Any:
    """A JSON answer as its operation's model says (``models.OPERATIONS``): objects become ``Model`` instances.
    An operation the document does not name (the computer-use proxy) answers plain JSON."""
    names = models.OPERATIONS.get(request.operation_key)
    if names is None or names[1] is None:
        return value
    return convert(value, getattr(models, names[1]))


def read_success(response: httpx.Response, body: bytes, request: AnsweredRequest, operation: str) -> Any:
    """The value of a 2xx answer whose ``body`` was read whole."""
    kind = request.response_type
    if kind == "none":
        return None
    content_type = response.headers.get("content-type", "")
    if kind == "bytes":
        if "application/json" in content_type:
            data = _base64_content(body, operation)
            if request.sink is None:
                return data
            request.sink.write(data)
            return len(data)
        return body
    text = body.decode("utf-8", errors="replace")
    if kind == "text":
        return text
    if text == "":
        return None
    try:
        value = jsonlib.loads(text)
    except ValueError:
        raise SandboxdError(
            f"{operation} answered {response.status_code} with a body that is not JSON: {text[:100]}",
            status=response.status_code,
            operation=operation,
            body=text,
        ) from None
    return typed(request, value)


def _base64_content(raw: bytes, operation: str) -> bytes:
    """The bytes of a JSON download answer (``content``, base64), for servers that answer JSON."""
    try:
        content = jsonlib.loads(raw.decode("utf-8")).get("content")
        if isinstance(content, str):
            return base64.b64decode(content, validate=True)
    except (ValueError, AttributeError, binascii.Error):
        pass
    raise SandboxdError(f"{operation}: the download answer has no content", operation=operation)


def _describe_validation(issues: Any) -> str:
    parts = []
    for issue in issues:
        if isinstance(issue, dict):
            location = ".".join(str(x) for x in issue.get("loc") or [])
            parts.append(f"{location}: {issue.get('msg')}")
    return "; ".join(parts)


def failure_of(response: httpx.Response, raw: bytes, request: AnsweredRequest, operation: str) -> Failure:
    """The error of an answer that is not 2xx (its body ``raw``), and whether the request may be sent again."""
    status = response.status_code
    text = raw.decode("utf-8", errors="replace")
    body: Any = None
    try:
        body = jsonlib.loads(text) if text else None
    except ValueError:
        body = None
    fields: Dict[str, Any] = body if isinstance(body, dict) else {}
    code = fields.get("code") if isinstance(fields.get("code"), str) else None
    facts: Dict[str, Any] = {}
    detail = fields.get("detail")
    if isinstance(detail, list):
        facts["detail"] = detail
        message = f"invalid request: {_describe_validation(detail)}"
    elif isinstance(detail, str):
        message = detail
    else:
        message = f"{operation} answered {status} {response.reason_phrase}".strip()
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if retry_after is None and isinstance(fields.get("retry_after"), (int, float)):
        retry_after = float(fields["retry_after"])
    if retry_after is not None:
        facts["retry_after"] = retry_after
    if isinstance(fields.get("execution_id"), int):
        facts["execution_id"] = fields["execution_id"]
    if isinstance(fields.get("session_id"), str):
        facts["session_id"] = fields["session_id"]
    if isinstance(fields.get("selector"), str):
        facts["selector"] = fields["selector"]
    error = error_for(
        status,
        code,
        request.kind,
        message,
        facts=facts,
        body=body if body is not None else text,
        operation=operation,
        request_id=response.headers.get("x-request-id"),
    )
    if status == 429 and code != "QUOTA_EXCEEDED":
        retryable = "always"
    elif status in (502, 503, 504):
        retryable = "idempotent"
    else:
        retryable = "never"
    return Failure(error, retryable, retry_after)
