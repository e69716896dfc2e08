/**
 * Browser automation: a Chromium of the caller's own (in its own VM), opened, driven by CSS selectors, read as
 * text for a model or seen as screenshots, and closed. browser_open, browser_navigate, browser_click, browser_type,
 * browser_press_key, browser_content, browser_extract, browser_screenshot, browser_close.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { BrowserInteractionResult } from '@sandboxd/sdk';
import { z } from 'zod';
import type { ToolContext } from '../context.ts';
import { withProgress } from '../progress.ts';
import { capText, guarded, imageResult, textResult } from '../results.ts';
import { browserSessionId } from '../schemas.ts';

const selector = z
  .string()
  .min(1)
  .max(10_000)
  .describe(
    'A CSS selector of the element, e.g. "#search", "button[type=submit]", "text=Sign in" (browser_content lists selectors of the page\'s interactive elements)',
  );
const elementTimeout = z.number().int().min(0).max(120_000).optional().describe('Milliseconds to wait for the element to appear (default 30000)');
const url = z.string().min(1).max(100_000).describe('The address: http(s), data: or about: URL');
const waitUntil = z.enum(['load', 'domcontentloaded', 'networkidle', 'commit']).optional().describe('When the page counts as loaded (default load)');

function interactionText(what: string, result: BrowserInteractionResult): string {
  const data = result.data && Object.keys(result.data).length > 0 ? ` ${JSON.stringify(result.data)}` : '';
  return `${what}: ${result.message}${data}`;
}

export function registerBrowserTools(server: McpServer, ctx: ToolContext): void {
  const browser = ctx.client.browser;

  server.registerTool(
    'browser_open',
    {
      title: 'Open a browser',
      description:
        'Opens a new headless Chromium browser session (in an isolated VM of its own) and optionally loads a URL. Returns its id, which the other browser_* tools take. ' +
        'Close it with browser_close when done: your plan allows only a few open at once, and an idle one closes by itself.',
      inputSchema: {
        url: url.optional(),
        viewport_width: z.number().int().min(100).max(3840).optional().describe('Viewport width in pixels (default 1280)'),
        viewport_height: z.number().int().min(100).max(2160).optional().describe('Viewport height in pixels (default 720)'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) =>
      guarded(async () =>
        withProgress(extra, 'opening a browser', ctx.progressIntervalMs, async () => {
          const page = await browser.createSession({
            ...(args.viewport_width !== undefined ? { viewportWidth: args.viewport_width } : {}),
            ...(args.viewport_height !== undefined ? { viewportHeight: args.viewport_height } : {}),
          });
          const loaded = args.url !== undefined ? await page.navigate(args.url) : null;
          const where = loaded ? `\n${interactionText('navigated', loaded)}` : '';
          return textResult(`Opened browser session ${page.id}.${where}`, { browser_session_id: page.id, ...(loaded ? { data: loaded.data } : {}) });
        }),
      ),
  );

  server.registerTool(
    'browser_navigate',
    {
      title: 'Go to a URL',
      description:
        'Loads a URL in the browser session and waits until it has loaded; answers with the final URL and the page title. Then read it with browser_content or look with browser_screenshot.',
      inputSchema: { browser_session_id: browserSessionId, url, wait_until: waitUntil },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    },
    async (args, extra) =>
      guarded(async () => {
        const result = await withProgress(extra, `loading ${args.url}`, ctx.progressIntervalMs, () =>
          browser.session(args.browser_session_id).navigate(args.url, args.wait_until ? { waitUntil: args.wait_until } : {}),
        );
        return textResult(interactionText('Navigated', result), { data: result.data });
      }),
  );

  server.registerTool(
    'browser_click',
    {
      title: 'Click an element',
      description: 'Clicks the element a CSS selector finds (waiting for it to appear).',
      inputSchema: {
        browser_session_id: browserSessionId,
        selector,
        button: z.enum(['left', 'right', 'middle']).optional().describe('Mouse button (default left)'),
        double: z.boolean().optional().describe('Double-click'),
        timeout_ms: elementTimeout,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args) =>
      guarded(async () => {
        const result = await browser.session(args.browser_session_id).click(args.selector, {
          ...(args.button ? { button: args.button } : {}),
          ...(args.double ? { clickCount: 2 } : {}),
          ...(args.timeout_ms !== undefined ? { timeout: args.timeout_ms } : {}),
        });
        return textResult(interactionText('Clicked', result), { data: result.data });
      }),
  );

  server.registerTool(
    'browser_type',
    {
      title: 'Type into a field',
      description:
        'Puts text into an input field or text area found by a CSS selector: replaces its value (or, with key_by_key, types it key by key, for fields that react to each key). ' +
        'press_enter submits afterwards.',
      inputSchema: {
        browser_session_id: browserSessionId,
        selector,
        text: z.string().max(100_000).describe('The text to enter'),
        press_enter: z.boolean().default(false).describe('Press Enter afterwards, e.g. to submit a search (default false)'),
        key_by_key: z.boolean().default(false).describe('Type key by key instead of setting the value at once (default false)'),
        timeout_ms: elementTimeout,
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args) =>
      guarded(async () => {
        const page = browser.session(args.browser_session_id);
        const timeout = args.timeout_ms !== undefined ? { timeout: args.timeout_ms } : {};
        const typed = args.key_by_key
          ? await page.type(args.selector, args.text, { delay: 20, ...timeout })
          : await page.fill(args.selector, args.text, timeout);
        const lines = [interactionText('Typed', typed)];
        if (args.press_enter) lines.push(interactionText('Pressed Enter', await page.keypress('Enter', { selector: args.selector, ...timeout })));
        return textResult(lines.join('\n'));
      }),
  );

  server.registerTool(
    'browser_press_key',
    {
      title: 'Press a key',
      description:
        'Presses a key or a chord in the page (in the element of selector, else the focused one): Enter, Tab, Escape, ArrowDown, PageDown, Control+A…',
      inputSchema: {
        browser_session_id: browserSessionId,
        key: z.string().min(1).max(100).describe('Key name as Playwright names keys: Enter, Tab, ArrowDown, a, Control+A'),
        selector: selector.optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (args) =>
      guarded(async () => {
        const result = await browser.session(args.browser_session_id).keypress(args.key, args.selector ? { selector: args.selector } : {});
        return textResult(interactionText(`Pressed ${args.key}`, result), { data: result.data });
      }),
  );

  server.registerTool(
    'browser_content',
    {
      title: 'Read the page',
      description:
        'The current page as text for you to read: its title, URL, readable text (an article alone, without navigation, ads and banners; any other page as its visible text), its interactive elements (links, buttons, inputs) each with a selector to use with browser_click and browser_type, and links.',
      inputSchema: {
        browser_session_id: browserSessionId,
        include_interactive: z.boolean().default(true).describe('List the interactive elements with selectors (default true)'),
        include_links: z.boolean().default(false).describe('List the links of the page content (default false)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) =>
      guarded(async () => {
        const page = await browser
          .session(args.browser_session_id)
          // Room for the page's links after the article's text blocks, which come first among the anchors.
          .content({ includeInteractive: args.include_interactive, includeAnchors: args.include_links, maxAnchors: 300 });
        const parts = [`${page.readable_content.title || '(no title)'} — ${page.url}`, '', page.readable_content.content];
        if (args.include_interactive && page.interactive_elements.length > 0) {
          parts.push(
            '',
            'Interactive elements (type, selector, text):',
            ...page.interactive_elements.map(
              (e) => `- ${e.type}  ${e.selector}  ${JSON.stringify(e.text)}${e.attributes.href ? `  href=${e.attributes.href}` : ''}`,
            ),
          );
        }
        // The anchors are text blocks and links; this list is the links.
        const links = page.content_anchors.filter((a) => a.href !== null);
        if (args.include_links && links.length > 0) parts.push('', 'Links:', ...links.map((a) => `- ${JSON.stringify(a.text)} ${a.href}  (${a.selector})`));
        const shown = capText(parts.join('\n'), ctx.maxOutputChars);
        return textResult(shown.text + (shown.cut > 0 ? `\n[truncated: ${shown.cut} characters of the page left out in the middle]` : ''));
      }),
  );

  server.registerTool(
    'browser_extract',
    {
      title: 'Extract elements',
      description:
        'The elements a CSS selector finds, each with its tag, text, form value, visibility, the attributes asked for and a selector that finds it again. For tables, lists and search results.',
      inputSchema: {
        browser_session_id: browserSessionId,
        selector: z.string().min(1).max(10_000).default('body *').describe('CSS selector of the elements (default "body *")'),
        attributes: z.array(z.string().min(1).max(200)).max(50).optional().describe('Attributes to read as well, e.g. ["href", "src"]'),
        max_elements: z.number().int().min(1).max(1000).default(100).describe('At most this many elements (default 100)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) =>
      guarded(async () => {
        const result = await browser
          .session(args.browser_session_id)
          .extract({ selector: args.selector, maxElements: args.max_elements, ...(args.attributes ? { attributes: args.attributes } : {}) });
        const lines = result.elements.map((e) => {
          const attributes = Object.entries(e.attributes).filter(([, v]) => v !== null);
          return `- <${e.tag}> ${e.selector}${e.visible ? '' : ' (hidden)'}: ${JSON.stringify(e.text)}${e.value !== null ? ` value=${JSON.stringify(e.value)}` : ''}${attributes.length > 0 ? ` ${attributes.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(' ')}` : ''}`;
        });
        const shown = capText(`${result.count} element${result.count === 1 ? '' : 's'}:\n${lines.join('\n')}`, ctx.maxOutputChars);
        return textResult(shown.text + (shown.cut > 0 ? `\n[truncated: ${shown.cut} characters left out in the middle]` : ''));
      }),
  );

  server.registerTool(
    'browser_screenshot',
    {
      title: 'Screenshot of the page',
      description: 'A screenshot of the browser page as an image: the viewport, or the whole scrollable page.',
      inputSchema: {
        browser_session_id: browserSessionId,
        full_page: z.boolean().default(false).describe('The whole page instead of the viewport (default false)'),
      },
      annotations: { readOnlyHint: true, openWorldHint: true },
    },
    async (args) =>
      guarded(async () => {
        const shot = await browser.session(args.browser_session_id).screenshot({ fullPage: args.full_page, format: 'png' });
        return imageResult(
          Buffer.from(shot.bytes).toString('base64'),
          'image/png',
          `Screenshot of browser session ${args.browser_session_id}: ${shot.width}×${shot.height} pixels`,
        );
      }),
  );

  server.registerTool(
    'browser_close',
    {
      title: 'Close a browser',
      description: 'Closes the browser session and frees its VM.',
      inputSchema: { browser_session_id: browserSessionId },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const closed = await browser.closeSession(args.browser_session_id);
        return textResult(closed ? `Closed browser session ${args.browser_session_id}.` : `Browser session ${args.browser_session_id} was already closed.`, {
          closed,
        });
      }),
  );
}
