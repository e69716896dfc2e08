/**
 * Serves the web console (packages/dashboard, built into its dist/) at `/`: the hashed assets under /assets/
 * cached for a year, index.html never cached and under a Content-Security-Policy whose scripts are those the
 * page itself names. The console's client-side routes (CONSOLE_ROUTES) answer with index.html; every API path
 * is left as it is. When the console is not built the same routes answer with a page that says how to build it
 * (the server still starts), and the CLI login link falls back to the server-rendered approval page.
 *
 * Why a nonce and not `script-src 'self'`: this origin also serves what VMs serve (path previews under
 * `/v1/app/…`), so 'self' would let any HTML injection into the console load a script a tenant wrote. Each
 * response of index.html gets a fresh random nonce on its own script and modulepreload tags (and in a
 * `csp-nonce` meta tag, which Vite's loader copies onto the chunks it preloads later), and `'strict-dynamic'`
 * extends the trust to the modules those scripts import. A `<script src>` that arrives any other way does not run.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../types.ts';

/** Where scripts/build-dashboard.mjs puts the built console. */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../../../dashboard/dist', import.meta.url));

/**
 * The paths the console routes in the browser (packages/dashboard/src/routes.ts); none is an API path.
 * `/cli-login` is where `sandbox login` sends the user (routes/cli-auth/start.ts).
 */
export const CONSOLE_ROUTES = [
  '/',
  '/sign-in',
  '/sandboxes',
  '/sandboxes/:session_id',
  '/apps',
  '/apps/:app',
  '/keys',
  '/vaults',
  '/webhooks',
  '/audit',
  '/usage',
  '/admin/users',
  '/admin/nodes',
  '/cli-login',
];
export const CLI_LOGIN_PATH = '/cli-login';

/** The console's policy; `nonce` null: no script at all (the page that says how to build the console). */
export function consolePolicy(nonce: string | null): string {
  return [
    "default-src 'self'",
    nonce ? `script-src 'nonce-${nonce}' 'strict-dynamic'` : "script-src 'none'",
    // xterm.js and React set element styles at run time; no inline script is allowed.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "connect-src 'self'",
    "worker-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * index.html with `nonce` on its script and modulepreload tags, and in the `csp-nonce` meta tag from which Vite's
 * loader copies it onto the chunks it preloads later (the terminal's, the desktop's).
 */
export function withNonce(html: string, nonce: string): string {
  return html
    .replace(/<script\b/g, `<script nonce="${nonce}"`)
    .replace(/<link\b(?=[^>]*\brel="modulepreload")/g, `<link nonce="${nonce}"`)
    .replace('</head>', `  <meta property="csp-nonce" nonce="${nonce}" />\n  </head>`);
}

function htmlHeaders(nonce: string | null): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    // Never stored: a cached copy would carry another response's nonce.
    'cache-control': 'no-store',
    'content-security-policy': consolePolicy(nonce),
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'same-origin',
  };
}

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandboxd</title></head>
<body style="font:16px system-ui,sans-serif;max-width:40rem;margin:3rem auto">
<h1>sandboxd</h1><p>The API is up (see <a href="/docs">/docs</a>), but the web console is not built.
Build it with <code>node scripts/build-dashboard.mjs</code> (<code>npm start</code> does it for you).</p></body></html>
`;

/**
 * Registers the console's routes; `distDir` defaults to packages/dashboard/dist. `notHere` tells requests whose
 * Host is not this deployment's (a user's custom domain that is not verified yet): they get the API's 404, not
 * the console.
 */
export async function registerDashboard(app: App, options: { distDir?: string; notHere?: (request: FastifyRequest) => Promise<boolean> } = {}): Promise<void> {
  const distDir = options.distDir ?? DASHBOARD_DIST;
  const indexFile = path.join(distDir, 'index.html');
  const assets = path.join(distDir, 'assets');
  if (fs.existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      // Vite names every asset by its content hash: a changed file is a new URL.
      immutable: true,
      maxAge: '365d',
      index: false,
      wildcard: false,
    });
  }

  const serveIndex = async (request: FastifyRequest, reply: FastifyReply) => {
    if (options.notHere && (await options.notHere(request))) return reply.callNotFound();
    let html: string;
    try {
      // Read on each request (a few KiB): a rebuild while the server runs is picked up at once.
      html = await fs.promises.readFile(indexFile, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (request.routeOptions.url === CLI_LOGIN_PATH) {
        const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
        return reply.redirect(`/cli-auth${query}`);
      }
      return reply.code(200).headers(htmlHeaders(null)).send(NOT_BUILT_PAGE);
    }
    const nonce = randomBytes(18).toString('base64url');
    return reply.code(200).headers(htmlHeaders(nonce)).send(withNonce(html, nonce));
  };
  for (const url of CONSOLE_ROUTES) {
    app.get(url, { schema: { hide: true } }, serveIndex);
  }
}
