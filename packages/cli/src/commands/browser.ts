/**
 * sandbox browser render | sessions | close: a page rendered once in a browser on the server (its screenshot to a
 * file, its HTML and text on request), and the browser sessions the client library drives.
 */
import fs from 'node:fs';
import path from 'node:path';
import { screenshotBytes, type ScreenshotFormat } from '@sandboxd/sdk';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { table } from '../output.ts';
import { integer } from '../parse.ts';

interface RenderOptions {
  output?: string;
  fullPage?: boolean;
  format?: string;
  quality?: number;
  width?: number;
  height?: number;
  waitFor?: string;
  waitTimeout?: number;
  htmlOut?: string;
  text?: boolean;
}

/** The format asked for, else the one the output file's extension names, else PNG. */
function formatOf(options: RenderOptions): ScreenshotFormat {
  if (options.format !== undefined) {
    if (options.format !== 'png' && options.format !== 'jpeg') throw new UsageError(`--format must be png or jpeg, got "${options.format}"`);
    return options.format;
  }
  return options.output !== undefined && /\.jpe?g$/i.test(options.output) ? 'jpeg' : 'png';
}

/** A page address as given; a bare host name is taken as https. */
function urlOf(given: string): string {
  if (/^[a-z][a-z0-9+.-]*:/i.test(given)) return given;
  if (/^[\w.-]+(:\d+)?(\/.*)?$/.test(given)) return `https://${given}`;
  throw new UsageError(`not a URL: "${given}" (e.g. https://example.com)`);
}

export function registerBrowser(program: Command, context: (options: GlobalOptions) => Context): void {
  const browser = program.command('browser').description('render pages in a browser on the server; list and close browser sessions');

  browser
    .command('render')
    .description('load a page once in a fresh browser and write its screenshot to a file (prints the usage id, title and size)')
    .argument('<url>', 'the page (https:// is assumed for a bare host name)')
    .option('-o, --output <file>', 'where the screenshot goes (default render-<usage id>.png or .jpeg; "-" for stdout)')
    .option('--full-page', 'the whole scrollable page, not just the viewport')
    .option('--format <format>', 'png or jpeg (default: from the --output extension, else png)')
    .option('--quality <n>', 'JPEG quality, 0 to 100', integer('--quality', 0, 100))
    .option('--width <pixels>', 'viewport width, 100 to 3840 (default 1280)', integer('--width', 100, 3840))
    .option('--height <pixels>', 'viewport height, 100 to 2160 (default 720)', integer('--height', 100, 2160))
    .option('--wait-for <selector>', 'also wait until this element is visible')
    .option('--wait-timeout <ms>', 'milliseconds for loading and --wait-for together (default 30000, at most 120000)', integer('--wait-timeout', 0, 120_000))
    .option('--html-out <file>', "also write the page's HTML to this file")
    .option('--text', "also print the page's readable text")
    .action(async (given: string, options: RenderOptions, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const format = formatOf(options);
      if (options.quality !== undefined && format !== 'jpeg')
        throw new UsageError('--quality is for JPEG: add --format jpeg (or an output file ending in .jpg)');
      if (options.output === '-' && ctx.out.json) throw new UsageError('--json and "-o -" (stdout) do not go together: the image would mix with the JSON');
      const spinner = ctx.out.spinner(`Rendering ${given}…`);
      let result;
      try {
        result = await ctx.client.browser.render({
          url: urlOf(given),
          format,
          ...(options.fullPage ? { fullPage: true } : {}),
          ...(options.quality !== undefined ? { quality: options.quality } : {}),
          ...(options.width !== undefined ? { width: options.width } : {}),
          ...(options.height !== undefined ? { height: options.height } : {}),
          ...(options.waitFor !== undefined ? { waitForSelector: options.waitFor } : {}),
          ...(options.waitTimeout !== undefined ? { waitTimeout: options.waitTimeout } : {}),
          ...(options.htmlOut !== undefined ? { returnHtml: true } : {}),
          ...(options.text ? { returnText: true } : {}),
        });
      } finally {
        spinner.stop();
      }
      const image = screenshotBytes(result);
      if (options.htmlOut !== undefined) fs.writeFileSync(options.htmlOut, result.html ?? '');
      if (options.output === '-') {
        process.stdout.write(image.bytes);
        ctx.out.info(`usage ${result.usage_id}: ${result.title || result.url} (${image.bytes.length} bytes, ${result.width}×${result.height} ${image.format})`);
        return;
      }
      const file = options.output ?? `render-${result.usage_id}.${image.format}`;
      fs.writeFileSync(file, image.bytes);
      const summary = {
        usage_id: result.usage_id,
        url: result.url,
        title: result.title,
        status_code: result.status_code,
        file: path.resolve(file),
        format: image.format,
        bytes: image.bytes.length,
        width: result.width,
        height: result.height,
        ...(options.htmlOut !== undefined ? { html_file: path.resolve(options.htmlOut) } : {}),
        ...(options.text ? { text: result.text } : {}),
        screenshot_url: result.screenshot_url,
      };
      ctx.out.result(summary, () =>
        [
          `usage ${result.usage_id}: ${result.title || '(no title)'} — ${result.url}${result.status_code !== null ? ` (HTTP ${result.status_code})` : ''}`,
          `${image.bytes.length} bytes, ${result.width}×${result.height} ${image.format}, written to ${file}`,
          ...(options.htmlOut !== undefined ? [`HTML written to ${options.htmlOut}`] : []),
          ...(options.text ? ['', result.text ?? ''] : []),
        ].join('\n'),
      );
    });

  browser
    .command('sessions')
    .description('list your open browser sessions')
    .action(async (_options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const sessions = await ctx.client.browser.listSessions();
      ctx.out.result(
        sessions,
        () =>
          table(
            ['ID', 'URL', 'VIEWPORT', 'PAGES', 'LAST ACTIVITY', 'EXPIRES'],
            sessions.map((s) => [s.session_id, s.url, `${s.viewport_width}×${s.viewport_height}`, String(s.pages_visited), s.last_activity, s.expires_at]),
          ) || 'No open browser sessions.',
      );
    });

  browser
    .command('close')
    .description('close a browser session (exit 0 also when it was already closed)')
    .argument('<id>', 'browser session id (from `sandbox browser sessions`)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      const closed = await ctx.client.browser.closeSession(id);
      ctx.out.result({ session_id: id, closed }, () =>
        closed ? `Closed browser session ${id}.` : `Browser session ${id} was not open (already closed, expired, or not yours).`,
      );
    });
}
