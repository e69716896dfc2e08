/**
 * What each page action does to a page, once: the session interactions of the same names and a render's actions
 * run these. The fields arrive validated by the contract's schemas (defaults filled in; the rules across fields
 * checked by the route), so nothing here parses input; the one rule that stays in the core is which URLs a
 * browser may open, a policy rather than a shape.
 */
import type * as Wire from '../../contract/browser/index.ts';
import { DEFAULT_TIMEOUT_MS } from '../../contract/browser/index.ts';
import { InputError } from '../errors.ts';
import type { BrowserPage } from './browser-driver.ts';

/** What an interaction answers besides its timing: a message and what it found or did. */
export interface PageOutcome {
  message: string;
  data: Record<string, unknown> | null;
}

/** An action's fields: its interaction's request without the session id (a render action's, without its type). */
type Fields<T> = Omit<T, 'session_id' | 'type'>;

/** Pages may be http(s), data: or about:blank; the rest (file:, chrome:, javascript:) is refused (422 at `loc`). */
export function checkPageUrl(url: string, loc: (string | number)[]): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InputError([{ loc, msg: 'not an absolute URL', type: 'value_error' }]);
  }
  if (!['http:', 'https:', 'data:', 'about:'].includes(parsed.protocol) || (parsed.protocol === 'about:' && url !== 'about:blank')) {
    throw new InputError([{ loc, msg: `the scheme ${parsed.protocol} is not allowed (http, https, data, about:blank)`, type: 'value_error' }]);
  }
  return url;
}

/** `loc`: where the fields are in the request, for the URL check's 422. */
export async function navigatePage(page: BrowserPage, fields: Fields<Wire.BrowserNavigateRequest>, loc: (string | number)[] = ['body']): Promise<PageOutcome> {
  const url = checkPageUrl(fields.url, [...loc, 'url']);
  const result = await page.navigate(url, { timeoutMs: fields.wait_timeout ?? DEFAULT_TIMEOUT_MS, waitUntil: fields.wait_until ?? 'load' });
  return { message: `navigated to ${result.url}`, data: { url: result.url, title: result.title, status_code: result.status } };
}

export async function clickPage(page: BrowserPage, fields: Fields<Wire.BrowserClickRequest>): Promise<PageOutcome> {
  await page.click(fields.selector, {
    force: fields.force ?? false,
    timeoutMs: fields.timeout ?? DEFAULT_TIMEOUT_MS,
    button: fields.button ?? 'left',
    clickCount: fields.click_count ?? 1,
  });
  return { message: `clicked ${fields.selector}`, data: { selector: fields.selector, url: page.url() } };
}

export async function typePage(page: BrowserPage, fields: Fields<Wire.BrowserTypeRequest>): Promise<PageOutcome> {
  await page.type(fields.selector, fields.text, { delayMs: fields.delay ?? 100, timeoutMs: fields.timeout ?? DEFAULT_TIMEOUT_MS });
  return { message: `typed ${fields.text.length} characters into ${fields.selector}`, data: { selector: fields.selector, characters: fields.text.length } };
}

export async function fillPage(page: BrowserPage, fields: Fields<Wire.BrowserFillRequest>): Promise<PageOutcome> {
  await page.fill(fields.selector, fields.value, { timeoutMs: fields.timeout ?? DEFAULT_TIMEOUT_MS });
  return { message: `filled ${fields.selector}`, data: { selector: fields.selector } };
}

/** The element into view when a selector is given, else the page to x/y (an absent one is 0). */
export async function scrollPage(page: BrowserPage, fields: Fields<Wire.BrowserScrollRequest>): Promise<PageOutcome> {
  const target = fields.selector ? { selector: fields.selector } : { x: fields.x ?? 0, y: fields.y ?? 0 };
  const position = await page.scroll(target, { timeoutMs: DEFAULT_TIMEOUT_MS });
  return { message: 'selector' in target ? `scrolled ${target.selector} into view` : `scrolled to ${position.x}, ${position.y}`, data: position };
}

export async function waitOnPage(page: BrowserPage, fields: Fields<Wire.BrowserWaitRequest>): Promise<PageOutcome> {
  await page.wait(fields.condition, { selector: fields.selector ?? null, timeoutMs: fields.timeout ?? DEFAULT_TIMEOUT_MS });
  return { message: `waited for ${fields.condition}${fields.selector ? ` ${fields.selector}` : ''}`, data: { condition: fields.condition, url: page.url() } };
}

export async function hoverPage(page: BrowserPage, fields: Fields<Wire.BrowserTargetRequest>): Promise<PageOutcome> {
  await page.hover(fields.selector, { timeoutMs: fields.timeout ?? DEFAULT_TIMEOUT_MS });
  return { message: `hovered over ${fields.selector}`, data: { selector: fields.selector } };
}

export async function keypressPage(page: BrowserPage, fields: Fields<Wire.BrowserKeyPressRequest>): Promise<PageOutcome> {
  await page.keypress(fields.key, { selector: fields.selector ?? null, timeoutMs: fields.timeout ?? DEFAULT_TIMEOUT_MS });
  return { message: `pressed ${fields.key}`, data: { key: fields.key, url: page.url() } };
}

/**
 * Runs one action of a render. A render's typing has no delay between keys unless the action asks (the schema's
 * default; 0 here too for callers that bypass it), unlike a session's, which is paced like a user's.
 */
export function runRenderAction(page: BrowserPage, action: Wire.BrowserRenderAction, loc: (string | number)[]): Promise<PageOutcome> {
  switch (action.type) {
    case 'navigate':
      return navigatePage(page, action, loc);
    case 'click':
      return clickPage(page, action);
    case 'type':
      return typePage(page, { ...action, delay: action.delay ?? 0 });
    case 'fill':
      return fillPage(page, action);
    case 'scroll':
      return scrollPage(page, action);
    case 'wait':
      return waitOnPage(page, action);
    case 'hover':
      return hoverPage(page, action);
    case 'keypress':
      return keypressPage(page, action);
  }
}
