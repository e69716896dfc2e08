/**
 * The desktop viewer's page: what a viewer link (`/v1/app/{session_id}/6080/vnc.html?sandboxd_token=…`, from
 * GET /v1/computeruse/{session_id}/viewer-url) opens. It is sandboxd's own page, noVNC bundled by the console's
 * build (packages/dashboard/viewer.html → dist/viewer.html, its scripts under /assets/), never a page of the
 * VM: the link is served on the console's origin, where a VM's page would act as the desktop's owner. It runs
 * under a policy that admits only its own nonce-marked scripts (and what they import), not any same-origin
 * script such as a VM's under `/v1/app/…`, and talks only to this origin (the VNC relay's WebSocket).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyReply } from 'fastify';
import { DASHBOARD_DIST } from '../dashboard/serve.ts';

/** The built page, beside the console's index.html. */
export const VIEWER_PAGE_FILE = 'viewer.html';

/** The page's Content-Security-Policy for one response, with its script nonce. */
export function viewerPagePolicy(nonce: string): string {
  return [
    "default-src 'none'",
    // The nonce admits the page's entry module; 'strict-dynamic' the modules it imports; 'self' is not trusted.
    `script-src 'nonce-${nonce}' 'strict-dynamic'`,
    "style-src 'self'",
    // noVNC draws the remote cursor from data: URLs.
    "img-src 'self' data: blob:",
    // The VNC relay (/v1/computeruse/{id}/vnc/websockify) on this origin.
    "connect-src 'self'",
    "worker-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>sandboxd</title></head>
<body style="font:16px system-ui,sans-serif;max-width:40rem;margin:3rem auto">
<h1>The desktop viewer is not built</h1><p>It is part of the web console's build:
<code>node scripts/build-dashboard.mjs</code> (<code>npm start</code> does it for you).</p></body></html>
`;

/** Answers with the viewer page (fresh nonce, never cached); 503 with a hint when the console is not built. */
export async function sendDesktopViewerPage(reply: FastifyReply, distDir: string = DASHBOARD_DIST): Promise<FastifyReply> {
  let html: string;
  try {
    // Read on each request (a few hundred bytes), as the console's index.html is: a rebuild is picked up at once.
    html = await fs.promises.readFile(path.join(distDir, VIEWER_PAGE_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    return reply
      .code(503)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(NOT_BUILT_PAGE);
  }
  const nonce = randomBytes(16).toString('base64');
  return reply
    .code(200)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': viewerPagePolicy(nonce),
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
    })
    .send(html.replace(/<(script|link)\b/g, `<$1 nonce="${nonce}"`));
}
