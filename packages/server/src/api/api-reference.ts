/**
 * The API reference page at /docs/reference: docs/reference/api/index.html, generated from the served OpenAPI
 * document by scripts/build-api-docs.mjs (the set-up runs it; `npm run docs:api`). One static page with Redoc and
 * the document inlined; it is read when asked for, so a rebuilt page is served without a restart. Not built: 404
 * with the command that builds it. The page is ours (no user content), but it shares the console's origin, so it
 * runs under a policy that allows only its own two scripts (by hash), Redoc's styles and its search worker.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { App } from './types.ts';

/** Where scripts/build-api-docs.mjs writes the page (the repository's docs/, from src/api/ and dist/api/ alike). */
export const API_REFERENCE_FILE = fileURLToPath(new URL('../../../../docs/reference/api/index.html', import.meta.url));

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>sandboxd API reference</title></head><body>
<h1>The API reference is not built</h1><p>Build it with <code>npm run docs:api</code> (the set-up, <code>npm start</code>, does it for you).
Meanwhile the interactive docs are at <a href="/docs">/docs</a> and the document at <a href="/openapi.json">/openapi.json</a>.</p></body></html>
`;

/** The page's policy: its inline scripts by hash, nothing from the network. */
function policyFor(html: string): string {
  const hashes = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(
    ([, code]) => `'sha256-${crypto.createHash('sha256').update(code!).digest('base64')}'`,
  );
  return [
    "default-src 'none'",
    `script-src ${hashes.join(' ')}`,
    "style-src 'unsafe-inline'",
    'img-src data:',
    'font-src data:',
    'worker-src blob:',
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Cached by the file, its time and size: hashing 1.5 MB on every request is not needed. */
let cached: { key: string; html: string; policy: string } | null = null;

export function registerApiReference(app: App, file = API_REFERENCE_FILE): void {
  app.get('/docs/reference', { schema: { hide: true } }, async (_request, reply) => {
    let stat: fs.Stats;
    try {
      stat = await fs.promises.stat(file);
    } catch {
      return reply.code(404).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(NOT_BUILT);
    }
    const key = `${file}:${stat.mtimeMs}:${stat.size}`;
    if (cached?.key !== key) {
      const html = await fs.promises.readFile(file, 'utf8');
      cached = { key, html, policy: policyFor(html) };
    }
    return reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', cached.policy)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'no-cache')
      .send(cached.html);
  });
}
