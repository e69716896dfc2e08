/**
 * The admin listener's Prometheus metrics against a real server with a real VM: the text parses, only the admin
 * token reads it, and what passed through the server is in it (an execute in the execute and VM acquisition
 * histograms and the request histogram by route pattern, an error by its code, the VM gauge by status).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parsePrometheusText, samplesOf, type Family } from '../helpers/prometheus-text.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('GET /metrics on the admin listener', { timeout: 10 * 60_000 }, () => {
  let server: TestServer;
  let token: string;
  let apiKey: string;

  before(async () => {
    server = await startTestServer();
    token = fs.readFileSync(path.join(server.dataDir, 'admin-token'), 'utf8').trim();
    ({ apiKey } = await server.createUserWithKey('metrics-user'));
  });
  after(async () => {
    await server?.close();
  });

  const scrape = async (): Promise<Map<string, Family>> => {
    const response = await fetch(`${server.adminUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await response.text());
  };
  const family = (families: Map<string, Family>, name: string, type: Family['type']): Family => {
    const found = families.get(name);
    assert.ok(found, `${name} is exposed`);
    assert.equal(found.type, type, name);
    return found;
  };

  test('only the admin token reads it; it is not on the public listener', async () => {
    assert.equal((await fetch(`${server.adminUrl}/metrics`)).status, 401);
    assert.equal((await fetch(`${server.adminUrl}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status, 401);
    assert.equal((await fetch(`${server.baseUrl}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status, 404);
  });

  test('an execute is counted in the execute, acquisition and request histograms; an error by its code; the VM by status', async () => {
    const before = await scrape();
    assert.deepEqual(samplesOf(before.get('sandboxd_execute_duration_seconds'), 'sandboxd_execute_duration_seconds_count'), [], 'nothing executed yet');

    const run = await call(server, 'POST', '/execute', { apiKey, json: { language: 'bash', command: 'echo counted' } });
    assert.equal(run.status, 200, run.text);
    assert.equal(run.body.stdout, 'counted\n');
    const missing = await call(server, 'GET', '/v1/sessions/session/ses_doesnotexist', { apiKey });
    assert.equal(missing.status, 404, missing.text);

    const families = await scrape();
    const executes = family(families, 'sandboxd_execute_duration_seconds', 'histogram');
    const bash = { language: 'bash', status: 'completed' };
    assert.deepEqual(
      samplesOf(executes, 'sandboxd_execute_duration_seconds_count', bash).map((s) => s.value),
      [1],
      `one execute: ${JSON.stringify(executes.samples)}`,
    );
    const [sum] = samplesOf(executes, 'sandboxd_execute_duration_seconds_sum', bash);
    assert.ok(sum && sum.value > 0 && sum.value < 600, `its duration in seconds: ${sum?.value}`);
    assert.deepEqual(
      samplesOf(executes, 'sandboxd_execute_duration_seconds_bucket', { ...bash, le: '+Inf' }).map((s) => s.value),
      [1],
    );

    const acquisitions = family(families, 'sandboxd_vm_acquire_duration_seconds', 'histogram');
    assert.equal(
      samplesOf(acquisitions, 'sandboxd_vm_acquire_duration_seconds_count').reduce((total, s) => total + s.value, 0),
      1,
      `one VM acquired: ${JSON.stringify(acquisitions.samples)}`,
    );

    // The agent ran the command (its exec call, ended well), and the store's statements were timed.
    const agentCalls = family(families, 'sandboxd_agent_call_duration_seconds', 'histogram');
    assert.ok(
      samplesOf(agentCalls, 'sandboxd_agent_call_duration_seconds_count', { call: 'exec', outcome: 'ok' }).some((s) => s.value >= 1),
      `an exec call of the agent: ${JSON.stringify(agentCalls.samples.filter((s) => s.name.endsWith('_count')))}`,
    );
    const statements = family(families, 'sandboxd_store_query_duration_seconds', 'histogram');
    assert.ok(samplesOf(statements, 'sandboxd_store_query_duration_seconds_count', { verb: 'insert' }).some((s) => s.value >= 1));

    const requests = family(families, 'sandboxd_http_request_duration_seconds', 'histogram');
    const counts = samplesOf(requests, 'sandboxd_http_request_duration_seconds_count');
    assert.ok(
      counts.some((s) => s.labels.route === '/execute' && s.labels.method === 'POST' && s.labels.status === '200' && s.value >= 1),
      'the execute route by its pattern',
    );
    assert.ok(
      counts.some((s) => s.labels.route === '/v1/sessions/session/:session_id' && s.labels.status === '404'),
      `a session route by its pattern, not its id: ${JSON.stringify(counts.map((s) => s.labels))}`,
    );
    assert.ok(!counts.some((s) => s.labels.route?.includes('ses_doesnotexist')), 'no id becomes a label value');

    const errors = family(families, 'sandboxd_errors_total', 'counter');
    const notFound = samplesOf(errors, 'sandboxd_errors_total', { code: missing.body.code, status: '404' });
    assert.ok(notFound.length === 1 && notFound[0]!.value >= 1, `the 404's code (${missing.body.code}) is counted: ${JSON.stringify(errors.samples)}`);

    const vms = family(families, 'sandboxd_vms', 'gauge');
    assert.ok(
      vms.samples.some((s) => s.labels.status === 'active' && s.value >= 1),
      `the execute's VM is active: ${JSON.stringify(vms.samples)}`,
    );
    assert.ok(family(families, 'sandboxd_process_resident_memory_bytes', 'gauge').samples[0]!.value > 0, "the process's own metrics");
    assert.deepEqual(
      family(families, 'sandboxd_webhook_queue_depth', 'gauge').samples.map((s) => s.value),
      [0],
    );
    // Declared from the start, so a dashboard's query finds them before the first failure or decision.
    family(families, 'sandboxd_background_failures_total', 'counter');
    family(families, 'sandboxd_egress_decisions_total', 'counter');
  });
});
