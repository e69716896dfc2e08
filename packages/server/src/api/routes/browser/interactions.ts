/**
 * POST /v1/browser/interactions/{action}: one operation per interaction with a browser session, all alike (the
 * session id travels in the body, as the published clients send it), so they are declared in one table. Each
 * validates its body with the contract's schema, checks the contract's rules across fields that a schema cannot
 * say (scroll needs a target; the `selector` and `hidden` waits need a selector), and hands the body to the
 * browser service as it is.
 */
import { Type, type Static, type TSchema } from 'typebox';
import {
  BROWSER_INTERACTIONS,
  BrowserClickRequest,
  BrowserContentRequest,
  BrowserExtractRequest,
  BrowserFillCredentialRequest,
  BrowserFillRequest,
  BrowserKeyPressRequest,
  BrowserNavigateRequest,
  BrowserScreenshotRequest,
  BrowserScrollRequest,
  BrowserTargetRequest,
  BrowserTypeRequest,
  BrowserWaitRequest,
  pageActionProblems,
  type BrowserInteractionName,
} from '../../../contract/browser/index.ts';
import type { FieldProblem } from '../../../contract/kit.ts';
import type { Principal } from '../../../core/authenticator.ts';
import type { BrowserApi } from '../../../core/browser/browser-api.ts';
import { InputError } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

const SESSION_404 = 'No such browser session among yours, or it ended (NOT_FOUND)';
const ELEMENT_404 =
  'No such browser session among yours (NOT_FOUND), or `selector` matched no element within `timeout` (ELEMENT_NOT_FOUND; the body has `selector`)';
const TIMEOUT_408 = 'Not done within `timeout` (BROWSER_TIMEOUT); the page stays as it got and the session stays usable';
const UNREACHABLE_503 = "The session's browser stopped answering";

interface Interaction<S extends TSchema> {
  action: BrowserInteractionName;
  /** The body schema, registered as the named component `body.$id`. */
  body: S;
  response: 'BrowserInteractionResponse' | 'BrowserScreenshotResponse' | 'BrowserExtractResponse' | 'BrowserContentResponse';
  summary: string;
  description: string;
  errors: Record<number, string>;
  call: (browser: BrowserApi, principal: Principal, body: Static<S>) => Promise<unknown>;
}

/** Keeps each entry's body type tied to its schema. */
const interaction = <S extends TSchema>(spec: Interaction<S>): Interaction<TSchema> => spec as unknown as Interaction<TSchema>;

/** The component name a body schema is registered under (every entry's schema has one). */
function componentOf(schema: TSchema): string {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new Error('an interaction body schema has no $id');
  return id;
}

export const INTERACTIONS: Interaction<TSchema>[] = [
  interaction({
    action: 'navigate',
    body: BrowserNavigateRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Go to a URL',
    description:
      "Loads `url` in the session's page and waits until `wait_until` (default `load`), at most `wait_timeout` milliseconds. `data` has what was loaded, e.g. the final `url` (after redirects) and the `title`.",
    errors: {
      400: 'The page could not be loaded (NAVIGATION_FAILED): the name does not resolve, the connection failed, TLS failed, or the scheme is not allowed',
      404: SESSION_404,
      408: TIMEOUT_408,
      503: UNREACHABLE_503,
    },
    call: (browser, principal, body) => browser.navigate(principal, body),
  }),
  interaction({
    action: 'click',
    body: BrowserClickRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Click an element',
    description:
      'Waits up to `timeout` milliseconds for the element to be visible, stable and enabled (unless `force`), scrolls it into view and clicks its centre.',
    errors: { 404: ELEMENT_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.click(principal, body),
  }),
  interaction({
    action: 'type',
    body: BrowserTypeRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Type text into an element, key by key',
    description:
      'Focuses the element and types `text` with `delay` milliseconds between keys, firing key events as a user would. Use `fill` to set a value at once.',
    errors: { 404: ELEMENT_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.type(principal, body),
  }),
  interaction({
    action: 'fill',
    body: BrowserFillRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Set the value of a form field',
    description: 'Replaces the value of an input, textarea, select or contenteditable element and fires its input and change events.',
    errors: { 404: ELEMENT_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.fill(principal, body),
  }),
  interaction({
    action: 'scroll',
    body: BrowserScrollRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Scroll an element into view, or the page to a position',
    description:
      'With `selector`, scrolls that element into view; else scrolls the page to `x`/`y` (absolute pixels; an absent one keeps its position). A body with neither is a 422. `data` has the resulting `{x, y}`.',
    errors: { 404: ELEMENT_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.scroll(principal, body),
  }),
  interaction({
    action: 'wait',
    body: BrowserWaitRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Wait for an element, a load state or a time',
    description: 'Waits until `condition` holds, at most `timeout` milliseconds (for `timeout`, waits exactly that long).',
    errors: { 404: ELEMENT_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.wait(principal, body),
  }),
  interaction({
    action: 'hover',
    body: BrowserTargetRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Move the mouse over an element',
    description: 'Waits for the element, scrolls it into view and hovers over its centre (menus and tooltips open as for a user).',
    errors: { 404: ELEMENT_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.hover(principal, body),
  }),
  interaction({
    action: 'keypress',
    body: BrowserKeyPressRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Press a key or a key chord',
    description: 'Presses `key` (`Enter`, `Tab`, `Escape`, `ArrowDown`, `Control+A`, …) in `selector`, or in the focused element when there is none.',
    errors: { 404: ELEMENT_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.keypress(principal, body),
  }),
  interaction({
    action: 'screenshot',
    body: BrowserScreenshotRequest,
    response: 'BrowserScreenshotResponse',
    summary: 'Take a screenshot of the page',
    description:
      'The viewport (or the whole page with `full_page`, or the `clip` rectangle) as PNG or JPEG, base64 in `screenshot`: `jq -r .screenshot | base64 -d > shot.png`.',
    errors: { 404: SESSION_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.screenshot(principal, body),
  }),
  interaction({
    action: 'extract',
    body: BrowserExtractRequest,
    response: 'BrowserExtractResponse',
    summary: 'Read elements of the page',
    description:
      'The elements `selector` matches (default `body *`), at most `max_elements`, each with its tag, text, the `attributes` asked for, visibility, form value and a selector that finds it again. No match is an empty list.',
    errors: { 404: SESSION_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.extract(principal, body),
  }),
  interaction({
    action: 'content',
    body: BrowserContentRequest,
    response: 'BrowserContentResponse',
    summary: 'The page as text for a language model',
    description:
      "The page's readable text and title, its interactive elements (links, buttons, form fields) and text anchors, each with a selector the other interactions take.",
    errors: { 404: SESSION_404, 408: TIMEOUT_408, 503: UNREACHABLE_503 },
    call: (browser, principal, body) => browser.content(principal, body),
  }),
  interaction({
    action: 'fill-credential',
    body: BrowserFillCredentialRequest,
    response: 'BrowserInteractionResponse',
    summary: 'Fill a stored credential into a login form',
    description:
      "Fills the username and password of a stored credential (`/v1/browser/credentials`) into the page, only when the page's host is one of its `allowed_hosts`; the password never appears in a response. With `submit`, presses Enter in the password field.",
    errors: {
      403: "The page's host is not among the credential's allowed_hosts",
      404: 'No such browser session or credential among yours (NOT_FOUND), or a field was not found (ELEMENT_NOT_FOUND, with `selector`)',
      408: TIMEOUT_408,
      503: UNREACHABLE_503,
    },
    call: (browser, principal, body) => browser.fillCredential(principal, body),
  }),
];

// Capabilities list the contract's interactions: the table serves exactly those, in that order.
if (INTERACTIONS.map((entry) => entry.action).join() !== BROWSER_INTERACTIONS.join())
  throw new Error("the interactions table and the contract's BROWSER_INTERACTIONS disagree");

/** Refuses a body that breaks one of the contract's rules across fields, with FastAPI's 422. */
export function refuseProblems(problems: FieldProblem[]): void {
  if (problems.length > 0) throw new InputError(problems);
}

/** The rules across fields of an interaction's body (at `body`), checked by every route that takes one. */
export function checkInteraction(action: BrowserInteractionName, body: unknown): void {
  refuseProblems(pageActionProblems(action, body as Record<string, unknown>, ['body']));
}

export function registerBrowserInteractions(app: App, { services, requireAuth }: RouteContext): void {
  for (const { action, body, response, summary, description, errors, call } of INTERACTIONS) {
    app.post(
      `/v1/browser/interactions/${action}`,
      {
        schema: {
          tags: ['browser'],
          summary,
          description: `${description} The session id travels in the body. Timeouts are milliseconds.`,
          security: BEARER_OR_API_KEY,
          body: Type.Ref(componentOf(body)),
          response: authedResponses({ 200: Type.Ref(response) }, errors),
        },
        onRequest: requireAuth,
      },
      async (request) => {
        checkInteraction(action, request.body);
        return call(services.sandbox.browser, principalOf(request), request.body);
      },
    );
  }
}
