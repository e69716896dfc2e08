/**
 * The server process as a new user runs it: first start creates the admin and prints its key once,
 * writes it 0600, serves the API, logs one redacted line per request, and shuts down on SIGTERM.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { runAdminCommand, startServerProcess, waitFor } from '../helpers/processes.ts';

describe('first start of the server process', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-e2e-'));
  const env = { SANDBOXD_DATA_DIR: dataDir, SANDBOXD_LOG_LEVEL: 'info' };
  after(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  test('creates the admin key file (0600), prints the key once, and the key manages keys', async () => {
    const server = await startServerProcess(env);
    try {
      const keyFile = path.join(dataDir, 'admin-api-key');
      assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
      const adminKey = fs.readFileSync(keyFile, 'utf8').trim();
      assert.match(adminKey, /^sbx_sk_/);
      assert.equal(server.output().split(adminKey).length - 1, 1, 'the key is printed exactly once');

      const created = await fetch(`${server.baseUrl}/v1/api-keys/`, {
        method: 'POST',
        headers: { 'x-api-key': adminKey, 'content-type': 'application/json' },
        body: JSON.stringify({ description: 'from the e2e test' }),
      });
      assert.equal(created.status, 200);
      const { full_key: fullKey } = (await created.json()) as { full_key: string };
      const listed = await fetch(`${server.baseUrl}/v1/api-keys/`, { headers: { authorization: `Bearer ${fullKey}` } });
      assert.equal(listed.status, 200);
      assert.equal(((await listed.json()) as unknown[]).length, 2);

      const openapi = (await (await fetch(`${server.baseUrl}/openapi.json`)).json()) as { info: { version: string } };
      assert.equal(openapi.info.version, '0.1.0');
      assert.equal((await fetch(`${server.baseUrl}/healthz`)).status, 200);
      // Serving comes before ready: /readyz answers 503 (starting, the default template building) until the
      // template's snapshots are made, then 200; never back.
      const readiness: { status: number; body: { status: string; checks: { store: string; default_template: string } } }[] = [];
      for (const deadline = Date.now() + 15 * 60_000; readiness.at(-1)?.status !== 200; await new Promise((r) => setTimeout(r, 100))) {
        assert.ok(Date.now() < deadline, `not ready within 15 minutes: ${JSON.stringify(readiness.at(-1))}`);
        const response = await fetch(`${server.baseUrl}/readyz`);
        readiness.push({ status: response.status, body: (await response.json()) as (typeof readiness)[number]['body'] });
      }
      const first200 = readiness.findIndex((answer) => answer.status === 200);
      for (const answer of readiness.slice(0, first200)) {
        assert.equal(answer.status, 503);
        assert.deepEqual([answer.body.status, answer.body.checks.store], ['starting', 'ok']);
        assert.ok(['idle', 'building'].includes(answer.body.checks.default_template), answer.body.checks.default_template);
      }
      assert.deepEqual(readiness[first200]!.body.checks, { store: 'ok', default_template: 'ready' });
      assert.equal((await fetch(`${server.baseUrl}/readyz`)).status, 200);
      console.log(JSON.stringify({ readyz_answers_before_ready: first200 }));

      await fetch(`${server.baseUrl}/v1/api-keys/?api_key=${fullKey}`, { headers: { 'x-api-key': fullKey } });
      // The line is written after the response is sent, so give the process a moment to write it.
      const requestLines = () =>
        server
          .output()
          .split('\n')
          .filter((l) => l.startsWith('{') && l.endsWith('}') && l.includes('"msg":"request"'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      await waitFor(() => requestLines().length >= 6, 5000);
      assert.ok(requestLines().every((l) => typeof l.reqId === 'string' && typeof l.statusCode === 'number'));
      assert.ok(!server.output().includes(fullKey), 'a key sent in a header or the query never reaches the log');
    } finally {
      assert.equal(await server.stop(), 0, 'SIGTERM shuts down cleanly');
    }
  });

  test('a second start keeps the store and creates no new admin', async () => {
    const before = fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8');
    const server = await startServerProcess(env);
    try {
      assert.ok(!server.output().includes('first start'));
      assert.equal(fs.readFileSync(path.join(dataDir, 'admin-api-key'), 'utf8'), before);
      const listed = await fetch(`${server.baseUrl}/v1/api-keys/`, { headers: { 'x-api-key': before.trim() } });
      assert.equal(listed.status, 200);
    } finally {
      await server.stop();
    }
  });

  test('the admin command creates users and keys offline, and they work on the server', async () => {
    const user = runAdminCommand(['user', 'create', 'carol', '--password-stdin', '--plan', 'pro', '--json'], env, 'carols-password\n');
    assert.equal(user.status, 0, user.stderr);
    assert.equal(JSON.parse(user.stdout).plan, 'pro');
    const duplicate = runAdminCommand(['user', 'create', 'carol', '--password', 'whatever-pw'], env);
    assert.equal(duplicate.status, 1);
    assert.match(duplicate.stderr, /already exists/);
    const key = runAdminCommand(['key', 'create', 'carol', '--json'], env);
    assert.equal(key.status, 0, key.stderr);
    const fullKey = JSON.parse(key.stdout).full_key as string;

    const server = await startServerProcess(env);
    try {
      const listed = await fetch(`${server.baseUrl}/v1/api-keys/`, { headers: { 'x-api-key': fullKey } });
      const keys = (await listed.json()) as { user_id: number }[];
      assert.equal(listed.status, 200);
      assert.equal(keys.length, 1);
      const token = await fetch(`${server.baseUrl}/v1/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'username=carol&password=carols-password',
      });
      assert.equal(token.status, 200);
    } finally {
      await server.stop();
    }
  });

  test('bad configuration stops the start with the variable named', async () => {
    const bad = runAdminCommand(['key', 'create', 'carol'], { ...env, SANDBOXD_PORT: 'eighty' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /SANDBOXD_PORT/);
  });
});
