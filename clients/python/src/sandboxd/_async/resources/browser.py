"""Browser automation: sessions (a Chromium of their own, driven by interactions), one-shot renders, usage,
stored screenshots and stored credentials.

    page = await client.browser.create_session(viewport_width=1280, viewport_height=720)
    await page.navigate("https://example.com")
    image = await page.screenshot()   # image.data: PNG bytes
    await page.close()

Errors: ElementNotFoundError (with ``selector``), BrowserTimeoutError, BrowserNavigationError,
BrowserSessionError (the session is not open, or not yours), QuotaExceededError (all your sessions are open).
Timeouts are milliseconds, as the server takes them.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Union

from ..._model import Model
from ...errors import BrowserSessionError, SandboxdError
from ...types import (
    BrowserAuthTestResult,
    BrowserCapabilities,
    BrowserContentResult,
    BrowserCredential,
    BrowserExtractResult,
    BrowserInteractionResult,
    BrowserRenderResult,
    BrowserScreenshotResult,
    BrowserSessionInfo,
    BrowserStoredScreenshot,
    BrowserUsageHistory,
    BrowserUsageSummary,
)
from ..._http import MISSING, defined
from ..transport import AsyncTransport


@dataclass(frozen=True)
class BrowserImage:
    """An image the server sent base64, decoded: ``data`` (bytes) in ``format`` ("png" or "jpeg")."""

    data: bytes
    format: str
    width: Optional[int] = None
    height: Optional[int] = None
    #: The server's whole answer.
    result: Optional[Union[Model, Mapping[str, Any]]] = None


def screenshot_image(result: Union[Model, Mapping[str, Any]]) -> BrowserImage:
    """The screenshot of a render (or of a session) as bytes; an error when the answer has none."""
    if result.get("screenshot") is None or result.get("format") is None:
        raise SandboxdError("the answer has no screenshot (it was rendered with return_screenshot=False)")
    return BrowserImage(
        base64.b64decode(result["screenshot"]), result["format"], result.get("width"), result.get("height"), result
    )


class AsyncBrowserSession:
    """A browser session as an object: ``await client.browser.create_session()`` gives one."""

    def __init__(self, browser: "Browser", id: str, created: Optional[BrowserSessionInfo] = None) -> None:
        self._browser = browser
        #: The session id.
        self.id = id
        #: What creating it answered (None for ``client.browser.session(id)``).
        self.created = created

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r})"

    async def navigate(
        self, url: str, *, wait_timeout: Optional[int] = None, wait_until: Optional[str] = None
    ) -> BrowserInteractionResult:
        """Loads ``url`` and waits until it is loaded (``wait_until``: load, domcontentloaded, networkidle,
        commit); ``data`` has the final ``url`` and the ``title``."""
        return await self._browser.interact(
            "/v1/browser/interactions/navigate",
            "browser.navigate",
            session_id=self.id,
            url=url,
            wait_timeout=wait_timeout,
            wait_until=wait_until,
        )

    async def click(
        self,
        selector: str,
        *,
        force: Optional[bool] = None,
        timeout: Optional[int] = None,
        button: Optional[str] = None,
        click_count: Optional[int] = None,
    ) -> BrowserInteractionResult:
        return await self._browser.interact(
            "/v1/browser/interactions/click",
            "browser.element",
            session_id=self.id,
            selector=selector,
            force=force,
            timeout=timeout,
            button=button,
            click_count=click_count,
        )

    async def type(
        self, selector: str, text: str, *, delay: Optional[int] = None, timeout: Optional[int] = None
    ) -> BrowserInteractionResult:
        """Types ``text`` key by key (``fill`` sets a value at once)."""
        return await self._browser.interact(
            "/v1/browser/interactions/type",
            "browser.element",
            session_id=self.id,
            selector=selector,
            text=text,
            delay=delay,
            timeout=timeout,
        )

    async def fill(self, selector: str, value: str, *, timeout: Optional[int] = None) -> BrowserInteractionResult:
        return await self._browser.interact(
            "/v1/browser/interactions/fill",
            "browser.element",
            session_id=self.id,
            selector=selector,
            value=value,
            timeout=timeout,
        )

    async def scroll(
        self, *, selector: Optional[str] = None, x: Optional[int] = None, y: Optional[int] = None
    ) -> BrowserInteractionResult:
        """Scrolls ``selector`` into view, or the page to ``x``/``y``; ``data`` has the resulting position."""
        if selector is None and x is None and y is None:
            raise TypeError("scroll needs a selector, or x and/or y")
        return await self._browser.interact(
            "/v1/browser/interactions/scroll", "browser.element", session_id=self.id, selector=selector, x=x, y=y
        )

    async def wait(
        self, condition: str, *, selector: Optional[str] = None, timeout: Optional[int] = None
    ) -> BrowserInteractionResult:
        """Waits for ``condition``: an element state (``visible`` or ``selector``, ``hidden``, ``attached``, ``detached``; with ``selector``), a load state, or ``timeout`` ms."""
        return await self._browser.interact(
            "/v1/browser/interactions/wait",
            "browser.element",
            session_id=self.id,
            condition=condition,
            selector=selector,
            timeout=timeout,
        )

    async def hover(self, selector: str, *, timeout: Optional[int] = None) -> BrowserInteractionResult:
        return await self._browser.interact(
            "/v1/browser/interactions/hover", "browser.element", session_id=self.id, selector=selector, timeout=timeout
        )

    async def keypress(
        self, key: str, *, selector: Optional[str] = None, timeout: Optional[int] = None
    ) -> BrowserInteractionResult:
        """Presses a key (``Enter``, ``Tab``, ``Control+A``…), in ``selector`` or the focused element."""
        return await self._browser.interact(
            "/v1/browser/interactions/keypress",
            "browser.element",
            session_id=self.id,
            key=key,
            selector=selector,
            timeout=timeout,
        )

    async def screenshot(
        self,
        *,
        full_page: Optional[bool] = None,
        format: Optional[str] = None,
        clip: Optional[Mapping[str, float]] = None,
        quality: Optional[int] = None,
    ) -> BrowserImage:
        """The page as an image (PNG unless ``format="jpeg"``), with its size and the server's answer."""
        result: BrowserScreenshotResult = await self._browser.interact(
            "/v1/browser/interactions/screenshot",
            "browser",
            session_id=self.id,
            full_page=full_page,
            format=format,
            clip=dict(clip) if clip is not None else None,
            quality=quality,
        )
        return screenshot_image(result)

    async def extract(
        self,
        *,
        selector: Optional[str] = None,
        attributes: Optional[Sequence[str]] = None,
        max_elements: Optional[int] = None,
    ) -> BrowserExtractResult:
        """Elements of the page (default ``body *``) with their text, the attributes asked for, and a selector."""
        return await self._browser.interact(
            "/v1/browser/interactions/extract",
            "browser",
            session_id=self.id,
            selector=selector,
            attributes=list(attributes) if attributes is not None else None,
            max_elements=max_elements,
        )

    async def content(
        self,
        *,
        include_interactive: Optional[bool] = None,
        include_anchors: Optional[bool] = None,
        max_anchors: Optional[int] = None,
    ) -> BrowserContentResult:
        """The page as text for a language model: readable content, interactive elements, anchors."""
        return await self._browser.interact(
            "/v1/browser/interactions/content",
            "browser",
            session_id=self.id,
            include_interactive=include_interactive,
            include_anchors=include_anchors,
            max_anchors=max_anchors,
        )

    async def fill_credential(
        self,
        credential_id: str,
        *,
        username_selector: Optional[str] = None,
        password_selector: Optional[str] = None,
        submit: Optional[bool] = None,
        timeout: Optional[int] = None,
    ) -> BrowserInteractionResult:
        """Fills a stored credential into the page's login form (only on its allowed hosts)."""
        return await self._browser.interact(
            "/v1/browser/interactions/fill-credential",
            "browser.element",
            session_id=self.id,
            credential_id=credential_id,
            username_selector=username_selector,
            password_selector=password_selector,
            submit=submit,
            timeout=timeout,
        )

    async def info(self) -> BrowserSessionInfo:
        """Its status, current URL and expiry."""
        return await self._browser.get_session(self.id)

    async def close(self) -> bool:
        """Closes it: True when this call closed it, False when it was already closed."""
        return await self._browser.close_session(self.id)

    async def __aenter__(self) -> "AsyncBrowserSession":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()


class BrowserCredentials:
    """Stored logins that ``fill_credential`` fills into pages of their allowed hosts; passwords are never shown."""

    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport

    async def create(
        self, *, name: str, username: str, password: str, allowed_hosts: Sequence[str]
    ) -> BrowserCredential:
        """``allowed_hosts``: ``example.com`` (exactly) or ``*.example.com``."""
        body = {"name": name, "username": username, "password": password, "allowed_hosts": list(allowed_hosts)}
        return await self._transport.request("POST", "/v1/browser/credentials", json=body)

    async def list(self) -> List[BrowserCredential]:
        answer = await self._transport.request("GET", "/v1/browser/credentials")
        return answer["credentials"]

    async def get(self, credential_id: str) -> BrowserCredential:
        return await self._transport.request(
            "GET", "/v1/browser/credentials/{credential_id}", params={"credential_id": credential_id}
        )

    async def update(
        self,
        credential_id: str,
        *,
        username: str = MISSING,
        password: str = MISSING,
        allowed_hosts: Sequence[str] = MISSING,
    ) -> BrowserCredential:
        """Changes what is given (``allowed_hosts`` replaces the list); the rest is kept."""
        body: Dict[str, Any] = {}
        if username is not MISSING:
            body["username"] = username
        if password is not MISSING:
            body["password"] = password
        if allowed_hosts is not MISSING:
            body["allowed_hosts"] = list(allowed_hosts)
        return await self._transport.request(
            "PATCH", "/v1/browser/credentials/{credential_id}", params={"credential_id": credential_id}, json=body
        )

    async def delete(self, credential_id: str) -> None:
        await self._transport.request(
            "DELETE", "/v1/browser/credentials/{credential_id}", params={"credential_id": credential_id}
        )


class Browser:
    def __init__(self, transport: AsyncTransport) -> None:
        self._transport = transport
        self.credentials = BrowserCredentials(transport)

    async def create_session(
        self,
        *,
        viewport_width: Optional[int] = None,
        viewport_height: Optional[int] = None,
        user_agent: Optional[str] = None,
        idle_timeout_seconds: Optional[int] = None,
    ) -> AsyncBrowserSession:
        """Starts a browser on a blank page; QuotaExceededError (429) when all the sessions your plan allows are
        open."""
        info = await self._transport.request(
            "POST",
            "/v1/browser/sessions/",
            json=defined(
                viewport_width=viewport_width,
                viewport_height=viewport_height,
                user_agent=user_agent,
                idle_timeout_seconds=idle_timeout_seconds,
            ),
            kind="browser.session.create",
        )
        return AsyncBrowserSession(self, info["session_id"], info)

    def session(self, session_id: str) -> AsyncBrowserSession:
        """A BrowserSession object for an existing session id (no request is made)."""
        return AsyncBrowserSession(self, session_id)

    async def list_sessions(self) -> List[BrowserSessionInfo]:
        """Your open sessions."""
        answer = await self._transport.request("GET", "/v1/browser/sessions/")
        return answer["sessions"]

    async def get_session(self, session_id: str) -> BrowserSessionInfo:
        return await self._transport.request(
            "GET", "/v1/browser/sessions/{session_id}", params={"session_id": session_id}, kind="browser"
        )

    async def close_session(self, session_id: str) -> bool:
        """Closes a session: True when this call closed it (200), False when it was already closed (404)."""
        try:
            await self._transport.request(
                "DELETE", "/v1/browser/sessions/{session_id}", params={"session_id": session_id}, kind="browser"
            )
            return True
        except BrowserSessionError as error:
            if error.status == 404:
                return False
            raise

    async def capabilities(self) -> BrowserCapabilities:
        return await self._transport.request("GET", "/v1/browser/capabilities")

    async def render(
        self,
        *,
        url: Optional[str] = None,
        html: Optional[str] = None,
        width: Optional[int] = None,
        height: Optional[int] = None,
        user_agent: Optional[str] = None,
        wait_until: Optional[str] = None,
        wait_for_selector: Optional[str] = None,
        wait_timeout: Optional[int] = None,
        full_page: Optional[bool] = None,
        clip: Optional[Mapping[str, float]] = None,
        format: Optional[str] = None,
        quality: Optional[int] = None,
        return_html: Optional[bool] = None,
        return_text: Optional[bool] = None,
        return_screenshot: Optional[bool] = None,
        actions: Optional[Sequence[Mapping[str, Any]]] = None,
    ) -> BrowserRenderResult:
        """Renders a page (``url``, or inline ``html``) once in a fresh browser: the answer has the screenshot
        (base64; ``screenshot_image(result)`` decodes it), and the HTML and text when asked. ``actions``: the
        interactions after loading, in order (``{"type": "click", "selector": "#accept"}``…). ``usage_id`` finds
        the stored screenshot again (``screenshot(usage_id)``)."""
        return await self._transport.request(
            "POST",
            "/v1/browser/render",
            json=defined(
                url=url,
                html=html,
                width=width,
                height=height,
                user_agent=user_agent,
                wait_until=wait_until,
                wait_for_selector=wait_for_selector,
                wait_timeout=wait_timeout,
                full_page=full_page,
                clip=dict(clip) if clip is not None else None,
                format=format,
                quality=quality,
                return_html=return_html,
                return_text=return_text,
                return_screenshot=return_screenshot,
                actions=[dict(a) for a in actions] if actions is not None else None,
            ),
            kind="browser.render",
        )

    async def render_screenshot(self, **options: Any) -> BrowserImage:
        """Renders a page (the options of ``render``) and answers its screenshot as bytes, with the whole answer."""
        options["return_screenshot"] = True
        return screenshot_image(await self.render(**options))

    async def usage(self) -> BrowserUsageSummary:
        """Renders, sessions, pages and browser seconds, in all and in the last 30 days."""
        return await self._transport.request("GET", "/v1/browser/usage")

    async def usage_history(self, *, limit: Optional[int] = None, offset: Optional[int] = None) -> BrowserUsageHistory:
        """Usage records, newest first (default 50 from 0)."""
        return await self._transport.request(
            "GET", "/v1/browser/usage/history", query={"limit": limit, "offset": offset}
        )

    async def screenshot(self, usage_id: int) -> BrowserImage:
        """The stored screenshot of a render, as bytes (``result`` is its record)."""
        record: BrowserStoredScreenshot = await self._transport.request(
            "GET", "/v1/browser/screenshot/{usage_id}", params={"usage_id": usage_id}
        )
        return BrowserImage(base64.b64decode(record["screenshot"]), record["format"], result=record)

    async def auth_test(self) -> BrowserAuthTestResult:
        """Who the key belongs to, and whether a browser can be started now."""
        return await self._transport.request("POST", "/v1/browser/auth/test", json={})

    async def interact(self, path: str, kind: str, **fields: Any) -> Any:
        """One interaction of a session (BrowserSession's methods call this); None values are left out."""
        return await self._transport.request("POST", path, json=defined(**fields), kind=kind)
