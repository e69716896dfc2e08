/**
 * Starts the real app on an ephemeral loopback port with a fresh SQLite store in a temp dir (or a given
 * database URL), for tests that talk HTTP to it like a client would.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp, type BuiltApp } from '../../src/app.ts';
import { freePort } from './processes.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Clock } from '../../src/core/clock.ts';
import { instrumentApp, VIOLATION_STATUS, type OpenApiConformance } from './openapi-conformance.ts';

export interface TestServer extends BuiltApp {
  baseUrl: string;
  config: Config;
  dataDir: string;
  /** Creates a user and an API key for them; returns the key. */
  createUserWithKey(username: string, plan?: string): Promise<{ userId: number; apiKey: string; password: string }>;
  close(): Promise<void>;
}

/**
 * `dataDir`: reuse a data directory (a restart); it is then left in place on close. `logger`: a logger to
 * read what the server logs (none by default).
 */
export async function startTestServer(options: { config?: Partial<Config>; clock?: Clock; dataDir?: string; logger?: FastifyBaseLogger } = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-test-'));
  // A known port rather than 0: the public URL (app URLs, terminal attach addresses) must name the real one.
  const port = options.config?.port ?? (await freePort());
  // The admin and internal listeners on ports of their own choosing (the defaults, the public port + 1 and + 2,
  // may be taken here).
  // DNS lookups (custom domain verification) never leave the machine: a loopback port nobody serves, unless
  // the test runs its own DNS server (helpers/dns-server.ts).
  // Without root there is no network guard (it needs QEMU's own user): VMs start unguarded there, as they did
  // before the guard failed closed (SANDBOXD_VM_NETWORK_UNGUARDED); as root the guard is required.
  const unguarded = process.getuid?.() !== 0 ? { vmNetworkUnguarded: true } : {};
  const config = loadConfig({}, { dataDir, host: '127.0.0.1', port, logLevel: 'silent', warmVcpus: [1], dnsServers: ['127.0.0.1:1'], dnsTimeoutMs: 1000, adminListen: '127.0.0.1:0', internalListen: '127.0.0.1:0', sshListen: '127.0.0.1:0', ...unguarded, ...options.config });
  let conformance: (() => OpenApiConformance) | undefined;
  const built = await buildApp({
    config,
    logger: options.logger ?? false,
    ...(options.clock ? { clock: options.clock } : {}),
    // Every response is checked against the served document (openapi-conformance.ts).
    instrument: (app) => (conformance = instrumentApp(app)),
  });
  await built.app.listen({ host: '127.0.0.1', port: config.port });
  const address = built.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return {
    ...built,
    config,
    dataDir,
    baseUrl: `http://127.0.0.1:${address.port}`,
    async createUserWithKey(username, plan) {
      const password = `pw-${username}-long-enough`;
      const user = await built.services.users.create({ username, password, ...(plan ? { plan } : {}) });
      const key = await built.services.apiKeys.create(user.id, { description: `test key of ${username}` });
      return { userId: user.id, apiKey: key.fullKey, password };
    },
    async close() {
      await built.app.close();
      if (!options.dataDir) {
        fs.rmSync(dataDir, { recursive: true, force: true });
        // Snapshots and paused VMs of this store live outside it (the VM user must reach them).
        fs.rmSync(config.vmSnapshotDir, { recursive: true, force: true });
      }
      const violations = conformance?.().violations ?? [];
      if (violations.length > 0) {
        throw new Error(`${violations.length} responses did not match /openapi.json:\n${violations.map((v) => `  ${v.method} ${v.url} → ${v.status}: ${v.problem}`).join('\n')}`);
      }
    },
  };
}

/** fetch() against the test server with JSON handling; returns status, headers and parsed body. */
export async function call(
  server: { baseUrl: string },
  method: string,
  url: string,
  options: { apiKey?: string; bearer?: string; json?: unknown; form?: Record<string, string>; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  let body: string | undefined = options.body;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(options.form).toString();
  }
  const response = await fetch(server.baseUrl + url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await response.text();
  if (response.status === VIOLATION_STATUS) throw new Error(`${method} ${url}: ${text}`);
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}
