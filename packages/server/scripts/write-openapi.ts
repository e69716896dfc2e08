/**
 * Writes the OpenAPI document the server serves (`GET /openapi.json`) to `packages/server/openapi.json`, the file
 * the clients' type generators read (the SDK's `scripts/generate-types.ts`, the Python client's
 * `scripts/generate_types.py`), so none of them builds or imports the server. It builds the real app in-process
 * (a temp SQLite store, default settings, nothing listening) and asks it with `app.inject`.
 *
 *   node --import tsx packages/server/scripts/write-openapi.ts            write the file
 *   node --import tsx packages/server/scripts/write-openapi.ts --check    exit 1 if the committed file is stale
 *
 * `npm run generate -w @sandboxd/sdk` runs it first, then the generators; `test/openapi-document.test.ts` fails
 * when a route changed and the file was not written again.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config/index.ts';

/** The committed document. */
export const OPENAPI_FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../openapi.json');

/** The served OpenAPI document, from an app built with default settings (so it does not depend on the environment). */
export async function fetchServedDocument(): Promise<Record<string, unknown>> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-openapi-'));
  try {
    // An empty environment: the document must not depend on the machine that writes it. Its other listeners
    // (started when the app is ready) on ports the kernel picks: the defaults (2222, 8081, 8082) may be held by a
    // sandboxd running on this machine.
    const config = loadConfig(
      {},
      { dataDir, host: '127.0.0.1', port: 8080, logLevel: 'silent', adminListen: '127.0.0.1:0', internalListen: '127.0.0.1:0', sshListen: '127.0.0.1:0' },
    );
    const { app } = await buildApp({ config, logger: false });
    try {
      const response = await app.inject({ method: 'GET', url: '/openapi.json' });
      if (response.statusCode !== 200) throw new Error(`GET /openapi.json answered ${response.statusCode}: ${response.body.slice(0, 200)}`);
      return response.json() as Record<string, unknown>;
    } finally {
      await app.close();
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The text of `openapi.json`: the served document, indented by two spaces, with a final newline. */
export async function renderOpenApiDocument(): Promise<string> {
  return `${JSON.stringify(await fetchServedDocument(), null, 2)}\n`;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const text = await renderOpenApiDocument();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(OPENAPI_FILE) ? fs.readFileSync(OPENAPI_FILE, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(`${path.relative(process.cwd(), OPENAPI_FILE)} is stale: run npm run generate -w @sandboxd/sdk\n`);
      process.exit(1);
    }
    process.stdout.write('openapi.json is up to date\n');
  } else {
    fs.writeFileSync(OPENAPI_FILE, text);
    process.stdout.write(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)} (${text.length} bytes)\n`);
  }
}
