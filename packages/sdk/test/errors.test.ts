/**
 * The error table against the real server: each status and code becomes its class, with what the class
 * carries (retryAfter, detail, executionId). The 408 case needs a VM (a run longer than the wait).
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import {
  AuthenticationError,
  ExecutionError,
  NotFoundError,
  QuotaExceededError,
  RateLimitError,
  Sandboxd,
  SandboxdError,
  SessionError,
  UnsupportedOperationError,
  ValidationError,
} from '../src/index.ts';
import { DEFAULT_PLANS } from '../../server/src/core/plans.ts';

describe('errors from the real server map to classes', () => {
  let server: TestServer;
  let owner: Sandboxd;
  let other: Sandboxd;
  let tiny: Sandboxd;

  before(async () => {
    server = await startTestServer({
      config: {
        plans: {
          ...DEFAULT_PLANS,
          tiny: { executionsPerMinute: 2, maxConcurrentVms: 1, maxTotalVcpus: 2, diskMb: 1024, maxBrowserSessions: 1, pausedRetentionSeconds: 604_800 },
        },
      },
    });
    const client = (apiKey: string) => new Sandboxd({ baseUrl: server.baseUrl, apiKey, maxRetries: 0 });
    owner = client((await server.createUserWithKey('owner', 'pro')).apiKey);
    other = client((await server.createUserWithKey('other', 'pro')).apiKey);
    tiny = client((await server.createUserWithKey('tiny', 'tiny')).apiKey);
  });
  after(() => server.close());

  test('401: a wrong key, and no key, are AuthenticationError', async () => {
    const wrong = new Sandboxd({ baseUrl: server.baseUrl, apiKey: 'sbx_sk_not-a-real-key', maxRetries: 0 });
    const error = await wrong.apiKeys.list().catch((e: unknown) => e);
    assert.ok(error instanceof AuthenticationError, String(error));
    assert.ok(error instanceof SandboxdError);
    assert.equal(error.status, 401);
    assert.equal(error.code, 'INVALID_CREDENTIALS');
    assert.equal(error.name, 'AuthenticationError');
    assert.match(error.requestId ?? '', /^req-/);
    const none = await new Sandboxd({ baseUrl: server.baseUrl, apiKey: '', maxRetries: 0 }).sessions.create().catch((e: unknown) => e);
    assert.ok(none instanceof AuthenticationError);
    assert.equal((none as AuthenticationError).code, 'NOT_AUTHENTICATED');
  });

  test("403 on kill (another user's session) is AuthenticationError, as the original clients treat it", async () => {
    const session = await owner.sessions.create();
    const error = await other.sessions.kill(session.id).catch((e: unknown) => e);
    assert.ok(error instanceof AuthenticationError, String(error));
    assert.equal(error.status, 403);
  });

  test('404 on a session operation is SessionError; elsewhere NotFoundError', async () => {
    const unknownSession = '00000000-0000-4000-8000-000000000000';
    const status = await owner.sessions.status(unknownSession).catch((e: unknown) => e);
    assert.ok(status instanceof SessionError, String(status));
    assert.ok(!(status instanceof NotFoundError));
    const kill = await owner.sessions.kill(unknownSession).catch((e: unknown) => e);
    assert.ok(kill instanceof SessionError);
    const noVm = await owner.sessions.kill((await owner.sessions.create()).id).catch((e: unknown) => e);
    assert.ok(noVm instanceof SessionError, 'kill of a session without a VM');
    const someoneElses = await other.sessions
      .connect((await owner.sessions.create()).id)
      .status()
      .catch((e: unknown) => e);
    assert.ok(someoneElses instanceof SessionError);
    const vm = await owner.vms.get('vm-does-not-exist').catch((e: unknown) => e);
    assert.ok(vm instanceof NotFoundError, String(vm));
    assert.equal(vm.code, 'NOT_FOUND');
    const key = await owner.apiKeys.get(99_999).catch((e: unknown) => e);
    assert.ok(key instanceof NotFoundError);
  });

  test('422 is ValidationError with the detail list', async () => {
    const error = await owner.sessions.create({ vcpuCount: 3 as 2, vmLifetimeSeconds: 5 }).catch((e: unknown) => e);
    assert.ok(error instanceof ValidationError, String(error));
    assert.equal(error.status, 422);
    const fields = error.detail.map((d) => d.loc.join('.')).sort();
    assert.deepEqual(fields, ['body.vcpu_count', 'body.vm_lifetime_seconds']);
    assert.match(error.message, /vcpu_count/);
  });

  test('429 RATE_LIMITED is RateLimitError with retryAfter from Retry-After', async () => {
    // 4 vCPUs is over the tiny plan's quota: each run is refused a VM, so this test boots none.
    const session = await tiny.sessions.create({ vcpuCount: 4 });
    let limited: unknown;
    for (let i = 0; i < 5 && !limited; i++) {
      await session.executeAsync('true', { language: 'bash' }).catch((e: unknown) => (limited = e));
    }
    assert.ok(limited instanceof RateLimitError, String(limited));
    assert.equal(limited.code, 'RATE_LIMITED');
    assert.ok(limited.retryAfter !== undefined && limited.retryAfter >= 1 && limited.retryAfter <= 60, `retryAfter ${limited.retryAfter}`);
    assert.ok(!(limited instanceof QuotaExceededError));
  });

  test('429 QUOTA_EXCEEDED is QuotaExceededError', async () => {
    const big = await tiny.sessions.create({ vcpuCount: 4 });
    const error = await tiny.vms.create({ sessionId: big.id }).catch((e: unknown) => e);
    assert.ok(error instanceof QuotaExceededError, String(error));
    assert.equal(error.status, 429);
    assert.ok(!(error instanceof RateLimitError));
  });

  test('501 is UnsupportedOperationError', async () => {
    // The real server has no placeholder operation left (worker control was the last one), so a server of
    // another version stands in: it answers 501 in the server's own error shape.
    const older = http.createServer((_request, response) => {
      response.writeHead(501, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ detail: 'not implemented yet', code: 'NOT_IMPLEMENTED' }));
    });
    await new Promise<void>((resolve) => older.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = older.address() as AddressInfo;
      const client = new Sandboxd({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'sbx_key', maxRetries: 0 });
      const url = '/v1/some/future/operation';
      const error = await client.transport.request('POST', url).catch((e: unknown) => e);
      assert.ok(error instanceof UnsupportedOperationError, String(error));
      assert.equal(error.code, 'NOT_IMPLEMENTED');
      assert.equal(error.operation, `POST ${url}`);
    } finally {
      older.close();
    }
  });

  test('worker control on the public listener is 403 for a user, whatever the key', async () => {
    const error = await owner.transport.request('POST', '/workers/worker-1/drain').catch((e: unknown) => e);
    assert.ok(error instanceof SandboxdError, String(error));
    assert.equal(error.status, 403);
    assert.equal(error.code, 'FORBIDDEN');
  });

  test('408 EXECUTION_TIMEOUT is ExecutionError with the execution id (needs a VM)', async () => {
    const session = await owner.sessions.create({ vcpuCount: 1 });
    await session.execute('x = 1', { timeout: 120 }); // the VM is up: the next call's wait is the run's alone
    const error = await session.execute('import time; time.sleep(4)', { timeout: 1 }).catch((e: unknown) => e);
    assert.ok(error instanceof ExecutionError, String(error));
    assert.equal(error.status, 408);
    assert.equal(error.code, 'EXECUTION_TIMEOUT');
    assert.equal(typeof error.executionId, 'number');
    assert.equal(error.sessionId, session.id);
    const record = await owner.executions.wait(error.executionId!, { pollInterval: 200 });
    assert.equal(record.status, 'completed', 'the run went on after the 408');
    await session.kill();
  });
});
