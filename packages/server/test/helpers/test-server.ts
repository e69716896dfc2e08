// test-lane: heavy (starts the app, whose engine boots VMs on first use): a file that imports this one runs in scripts/run-tests.mjs's heavy lane unless it says `test-lane: light`, and then it may boot no VM (forbidVms below).
/**
 * Starts the real app on an ephemeral loopback port with a fresh SQLite store in a temp dir (or a given
 * database URL), for tests that talk HTTP to it like a client would.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { buildApp, type BuiltApp } from '../../src/app.ts';
import { EPHEMERAL_LISTENERS, freePort } from './ports.ts';
import { loadConfig, type Config, type ConfigOverrides } from '../../src/config/index.ts';
import type { Clock } from '../../src/core/clock.ts';
import type { Database } from '../../src/store/database.ts';
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
 * read what the server logs (none by default). `database`: a store opened by the test (it closes it).
 */
export async function startTestServer(
  options: { config?: ConfigOverrides; clock?: Clock; dataDir?: string; logger?: FastifyBaseLogger; database?: Database } = {},
): Promise<TestServer> {
  const dataDir = options.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-test-'));
  const unguarded = process.getuid?.() !== 0 ? { vmNetworkUnguarded: true } : {};
  let conformance: (() => OpenApiConformance) | undefined;
  // A known port rather than 0: the public URL (app URLs, terminal attach addresses) must name the real one. A port
  // that was free a moment ago may be taken by the time the app listens (other test files run beside this one):
  // then the app is closed (its workers with it, or the process would never end) and built again on another.
  for (let attempt = 1; ; attempt++) {
    const port = options.config?.port ?? (await freePort());
    // The admin and internal listeners on ports of their own choosing (the defaults, the public port + 1 and + 2,
    // may be taken here).
    // DNS lookups (custom domain verification) never leave the machine: a loopback port nobody serves, unless
    // the test runs its own DNS server (helpers/dns-server.ts).
    // Without root there is no network guard (it needs QEMU's own user): VMs start unguarded there, as they did
    // before the guard failed closed (SANDBOXD_VM_NETWORK_UNGUARDED); as root the guard is required.
    const config = loadConfig(
      {},
      {
        dataDir,
        host: '127.0.0.1',
        port,
        logLevel: 'silent',
        warmVcpus: [1],
        // The pool stays at its floor: a test's own burst must not leave restores running behind the next test.
        poolMax: 0,
        dnsServers: ['127.0.0.1:1'],
        dnsTimeoutMs: 1000,
        ...EPHEMERAL_LISTENERS,
        ...unguarded,
        ...options.config,
      },
    );
    const built = await buildApp({
      config,
      logger: options.logger ?? false,
      ...(options.clock ? { clock: options.clock } : {}),
      ...(options.database ? { database: options.database } : {}),
      // Every response is checked against the served document (openapi-conformance.ts).
      instrument: (app) => (conformance = instrumentApp(app)),
    });
    if (process.env.SANDBOXD_TEST_LANE === 'light') forbidVms(built.services.sandbox.engine);
    try {
      await built.app.listen({ host: '127.0.0.1', port: config.server.port });
    } catch (error) {
      await built.app.close().catch(() => undefined);
      const taken = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
      if (taken && options.config?.port === undefined && !options.database && attempt < 5) continue;
      throw error;
    }
    return serverOf(built, config);
  }

  function serverOf(built: Awaited<ReturnType<typeof buildApp>>, config: ReturnType<typeof loadConfig>): TestServer {
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
          fs.rmSync(config.vm.vmSnapshotDir, { recursive: true, force: true });
        }
        const violations = conformance?.().violations ?? [];
        if (violations.length > 0) {
          throw new Error(
            `${violations.length} responses did not match /openapi.json:\n${violations.map((v) => `  ${v.method} ${v.url} → ${v.status}: ${v.problem}`).join('\n')}`,
          );
        }
      },
    };
  }
}

/**
 * In the light lane (scripts/run-tests.mjs runs its files beside one that boots VMs and needs the cores) a
 * server may boot no VM: its engine's start, which every VM acquisition, build and pool fill waits for, fails,
 * and so does the file, whatever its tests make of the refusal, within half a minute (a test that waits for a VM
 * could otherwise wait out its own long deadline), saying what to change.
 */
function forbidVms(engine: { start(): Promise<unknown> }): void {
  const message = 'a test file in the light lane boots a VM: remove its `test-lane: light` comment, so that it runs in the heavy lane';
  let refused = false;
  engine.start = () => {
    if (!refused) {
      refused = true;
      process.stderr.write(`\n✖ ${message}\n`);
      process.exitCode = 1;
      setTimeout(() => process.exit(1), 30_000).unref();
    }
    return Promise.reject(new Error(message));
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

/** POST /execute in `session` as `apiKey` (120 s), asserting a 200 and exit code 0; answers the result's body. */
export async function executeOk(server: { baseUrl: string }, apiKey: string, session: string, body: Record<string, unknown>) {
  const answer = await call(server, 'POST', '/execute', { apiKey, json: { session_id: session, timeout: 120, ...body } });
  assert.equal(answer.status, 200, answer.text);
  assert.equal(answer.body.exit_code, 0, `${JSON.stringify(body)}: ${answer.body.stderr}`);
  return answer.body;
}
