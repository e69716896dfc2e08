/**
 * Ownership over every session route: another user gets 404 for sessions, VMs and executions they do not
 * own (403 only where the spec says so: /kill); /kill's 400/403/404 matrix; rate limits and quotas by plan.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { DEFAULT_PLANS } from '../../src/core/plans.ts';

describe('ownership, kill rules, rate limits and quotas', () => {
  let server: TestServer;
  let owner: string;
  let other: string;
  let limited: string;
  let sessionId: string;
  let vmId: string;
  let executionId: number;

  before(async () => {
    server = await startTestServer({
      config: {
        plans: {
          ...DEFAULT_PLANS,
          tiny: { executionsPerMinute: 3, maxConcurrentVms: 1, maxTotalVcpus: 2, diskMb: 1024, maxBrowserSessions: 1, pausedRetentionSeconds: 604_800 },
        },
      },
    });
    owner = (await server.createUserWithKey('owner', 'pro')).apiKey;
    other = (await server.createUserWithKey('other', 'pro')).apiKey;
    limited = (await server.createUserWithKey('limited', 'tiny')).apiKey;
    sessionId = (await call(server, 'POST', '/v1/sessions/session', { apiKey: owner, json: { vcpu_count: 1 } })).body.session_id;
    const run = await call(server, 'POST', '/execute', {
      apiKey: owner,
      json: { session_id: sessionId, language: 'bash', command: 'echo hi > /tmp/owned.txt; echo ok' },
    });
    assert.equal(run.status, 200, run.text);
    vmId = run.body.vm_id;
    executionId = run.body.execution_id;
  });
  after(() => server.close());

  test("another user gets 404 on every route that names the owner's session, VM or execution", async () => {
    const attempts: [string, string, Record<string, unknown>?][] = [
      ['GET', `/v1/sessions/status/${sessionId}`],
      ['GET', `/v1/sessions/session/${sessionId}`],
      ['GET', `/v1/sessions/usage/${sessionId}`],
      ['GET', `/v1/vms/${vmId}`],
      ['DELETE', `/v1/vms/${vmId}`],
      ['GET', `/v1/executions/${executionId}`],
      ['POST', '/execute', { session_id: sessionId, language: 'bash', command: 'cat /tmp/owned.txt' }],
      ['POST', '/v1/execute_async', { session_id: sessionId, code: 'print(1)' }],
      ['POST', '/download', { session_id: sessionId, filename: '/tmp/owned.txt' }],
      ['POST', '/v1/vms', { session_id: sessionId }],
    ];
    for (const [method, url, json] of attempts) {
      const res = await call(server, method, url, { apiKey: other, ...(json ? { json } : {}) });
      assert.equal(res.status, 404, `${method} ${url}: ${res.text}`);
      assert.equal(res.body.code, 'NOT_FOUND');
    }
    const form = new FormData();
    form.append('session_id', sessionId);
    form.append('remote_path', '/tmp/intruder');
    form.append('file', new Blob([Buffer.from('x')]), 'x');
    const upload = await fetch(`${server.baseUrl}/upload`, { method: 'POST', headers: { 'x-api-key': other }, body: form });
    assert.equal(upload.status, 404);
    const lists = [
      await call(server, 'GET', '/v1/vms', { apiKey: other }),
      await call(server, 'GET', '/v1/executions/', { apiKey: other }),
      await call(server, 'GET', '/v1/sessions/sandboxes', { apiKey: other }),
    ];
    for (const list of lists) assert.deepEqual(list.body, [], "lists show none of the owner's things");
    const still = await call(server, 'GET', `/v1/sessions/status/${sessionId}`, { apiKey: owner });
    assert.equal(still.body.vm_status, 'active', "the owner's VM is untouched");
  });

  test("/kill: 400 for a malformed id, 404 for an unknown session, 403 for someone else's, 404 when no VM", async () => {
    const malformed = await call(server, 'POST', '/kill', { apiKey: owner, json: { session_id: 'not-a-uuid' } });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.code, 'BAD_REQUEST');
    const unknown = await call(server, 'POST', '/kill', { apiKey: owner, json: { session_id: '00000000-0000-4000-8000-000000000000' } });
    assert.equal(unknown.status, 404);
    const foreign = await call(server, 'POST', '/kill', { apiKey: other, json: { session_id: sessionId } });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.code, 'FORBIDDEN');
    const fresh = (await call(server, 'POST', '/v1/sessions/session', { apiKey: owner, json: {} })).body.session_id;
    const noVm = await call(server, 'POST', '/kill', { apiKey: owner, json: { session_id: fresh } });
    assert.equal(noVm.status, 404);
    const missingField = await call(server, 'POST', '/kill', { apiKey: owner, json: {} });
    assert.equal(missingField.status, 422);
  });

  test('quota: a plan with one concurrent VM cannot start a second (429 QUOTA_EXCEEDED)', async () => {
    const a = (await call(server, 'POST', '/v1/sessions/session', { apiKey: limited, json: { vcpu_count: 1 } })).body.session_id;
    const b = (await call(server, 'POST', '/v1/sessions/session', { apiKey: limited, json: { vcpu_count: 1 } })).body.session_id;
    const first = await call(server, 'POST', '/execute', { apiKey: limited, json: { session_id: a, language: 'bash', command: 'true' } });
    assert.equal(first.status, 200, first.text);
    const second = await call(server, 'POST', '/execute', { apiKey: limited, json: { session_id: b, language: 'bash', command: 'true' } });
    assert.equal(second.status, 429, second.text);
    assert.equal(second.body.code, 'QUOTA_EXCEEDED');
    const big = (await call(server, 'POST', '/v1/sessions/session', { apiKey: limited, json: { vcpu_count: 4 } })).body.session_id;
    await call(server, 'POST', '/kill', { apiKey: limited, json: { session_id: a } });
    const tooManyCpus = await call(server, 'POST', '/v1/vms', { apiKey: limited, json: { session_id: big } });
    assert.equal(tooManyCpus.status, 429);
    assert.equal(tooManyCpus.body.code, 'QUOTA_EXCEEDED');
    assert.match(tooManyCpus.body.detail, /vCPU/);
  });

  test("rate limit: past the plan's executions per minute, 429 RATE_LIMITED with Retry-After", async () => {
    const session = (await call(server, 'POST', '/v1/sessions/session', { apiKey: limited, json: { vcpu_count: 1 } })).body.session_id;
    let limitedResponse;
    for (let i = 0; i < 6 && !limitedResponse; i++) {
      const res = await call(server, 'POST', '/execute_async', { apiKey: limited, json: { session_id: session, language: 'bash', command: 'true' } });
      if (res.status === 429) limitedResponse = res;
      else assert.equal(res.status, 200, res.text);
    }
    assert.ok(limitedResponse, 'the 4th execution in a minute is refused');
    assert.equal(limitedResponse.body.code, 'RATE_LIMITED');
    const retryAfter = Number(limitedResponse.headers.get('retry-after'));
    assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);
  });
});
