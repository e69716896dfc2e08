// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * The client's operations that need no VM, against the real server: API keys, sessions without a VM,
 * sign-in tokens, the command-line login, webhooks, audit, VMs and sandboxes lists.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { AuthenticationError, createPkcePair, Sandboxd, SandboxdError, Session } from '../src/index.ts';

describe('client against the real server (no VM needed)', () => {
  let server: TestServer;
  let user: { userId: number; apiKey: string; password: string };
  let client: Sandboxd;

  before(async () => {
    server = await startTestServer({ config: { cliAuthIntervalSeconds: 1, webhookAllowPrivate: true } });
    user = await server.createUserWithKey('carol', 'pro');
    client = new Sandboxd({ baseUrl: server.baseUrl, apiKey: user.apiKey, maxRetries: 0 });
  });
  after(() => server.close());

  test('API keys: create (full key once), get, update, list, check, delete', async () => {
    const created = await client.apiKeys.create({ description: 'ci', expiresAt: new Date(Date.now() + 86_400_000) });
    assert.match(created.full_key, /^sbx_sk_/);
    const fresh = new Sandboxd({ baseUrl: server.baseUrl, apiKey: created.full_key, maxRetries: 0 });
    assert.equal(await fresh.apiKeys.check(), true);
    const got = await client.apiKeys.get(created.id);
    assert.equal(got.description, 'ci');
    assert.equal(got.full_key, undefined, 'never shown again');
    assert.equal((await client.apiKeys.update(created.id, { description: 'ci-2' })).description, 'ci-2');
    assert.ok((await client.apiKeys.list()).some((k) => k.id === created.id));
    await client.apiKeys.delete(created.id);
    await assert.rejects(fresh.apiKeys.check(), AuthenticationError);
  });

  test('sessions: create returns a Session with the create answer; status, details and connect', async () => {
    const session = await client.sessions.create({ vcpuCount: 1, memoryMb: 256, vmLifetimeSeconds: 60, metadata: { team: 'search' }, env: { MODE: 'test' } });
    assert.ok(session instanceof Session);
    assert.match(session.id, /^[0-9a-f-]{36}$/);
    assert.deepEqual(
      {
        vcpu: session.created?.vcpu_count,
        memory: session.created?.memory_mb,
        lifetime: session.created?.vm_lifetime_seconds,
        metadata: session.created?.metadata,
        status: session.created?.status,
      },
      { vcpu: 1, memory: 256, lifetime: 60, metadata: { team: 'search' }, status: 'created' },
    );
    const status = await session.status();
    assert.deepEqual(
      { exists: status.exists, vm_assigned: status.vm_assigned, vm_alive: status.vm_alive, vm_status: status.vm_status, vm_id: status.vm_id },
      { exists: true, vm_assigned: false, vm_alive: false, vm_status: null, vm_id: null },
    );
    const details = (await client.sessions.connect(session.id).details()) as Record<string, unknown>;
    assert.equal(details.session_id ?? details.id, session.id);
    assert.ok(!JSON.stringify(details).includes('"test"'), 'env values are never shown');
    assert.deepEqual(await session.executions(), []);
  });

  test('VMs and sandboxes start empty; the metadata filter is sent as JSON', async () => {
    assert.deepEqual(await client.vms.list(), []);
    assert.deepEqual(await client.sandboxes.list({ metadata: { team: 'search' } }), []);
  });

  test('a bearer token from auth.token works as accessToken', async () => {
    const token = await client.auth.token({ username: 'carol', password: user.password });
    assert.equal(token.token_type, 'bearer');
    const viaToken = new Sandboxd({ baseUrl: server.baseUrl, accessToken: token.access_token, maxRetries: 0 });
    assert.ok((await viaToken.apiKeys.list()).length >= 1);
    await assert.rejects(client.auth.token({ username: 'carol', password: 'wrong-password' }), AuthenticationError);
  });

  test('command-line login through the client: start, pending, approve, waitForKey, replay refused', async () => {
    const anonymous = new Sandboxd({ baseUrl: server.baseUrl, apiKey: '', maxRetries: 0 });
    const pkce = await createPkcePair();
    assert.match(pkce.codeVerifier, /^[A-Za-z0-9_-]{43}$/);
    const started = await anonymous.cliAuth.start({ hostname: 'ci-runner', codeChallenge: pkce.codeChallenge });
    const pending = await anonymous.cliAuth.exchange({ deviceCode: started.device_code, codeVerifier: pkce.codeVerifier }).catch((e: unknown) => e);
    assert.ok(pending instanceof SandboxdError);
    assert.equal(pending.code, 'CLI_AUTH_PENDING');
    assert.equal(pending.status, 400);
    const polls: number[] = [];
    const waiting = anonymous.cliAuth.waitForKey({
      deviceCode: started.device_code,
      codeVerifier: pkce.codeVerifier,
      interval: started.interval,
      onPending: ({ polls: n }) => polls.push(n),
    });
    await client.cliAuth.approve(started.user_code);
    const key = await waiting;
    assert.equal(key.description, 'CLI - ci-runner');
    assert.equal(key.username, 'carol');
    assert.ok(polls.length >= 1);
    const mine = new Sandboxd({ baseUrl: server.baseUrl, apiKey: key.api_key, maxRetries: 0 });
    assert.ok((await mine.apiKeys.list()).some((k) => k.id === key.api_key_id));
    const replay = await anonymous.cliAuth.exchange({ deviceCode: started.device_code, codeVerifier: pkce.codeVerifier }).catch((e: unknown) => e);
    assert.equal((replay as SandboxdError).code, 'CLI_AUTH_ALREADY_USED');
  });

  test('waitForKey ends with the denial', async () => {
    const anonymous = new Sandboxd({ baseUrl: server.baseUrl, apiKey: '', maxRetries: 0 });
    const pkce = await createPkcePair();
    const started = await anonymous.cliAuth.start({ hostname: 'h', codeChallenge: pkce.codeChallenge });
    await client.cliAuth.approve(started.user_code, { deny: true });
    const error = await anonymous.cliAuth
      .waitForKey({ deviceCode: started.device_code, codeVerifier: pkce.codeVerifier, interval: 1 })
      .catch((e: unknown) => e);
    assert.equal((error as SandboxdError).code, 'CLI_AUTH_DENIED');
  });

  test('webhooks and audit', async () => {
    const endpoint = await client.webhooks.endpoints.create({ url: 'http://127.0.0.1:9/hook', event_patterns: ['vm.*'] });
    assert.match(endpoint.secret ?? '', /^whsec_/);
    assert.equal((await client.webhooks.endpoints.get(endpoint.id)).url, 'http://127.0.0.1:9/hook');
    assert.equal((await client.webhooks.endpoints.update(endpoint.id, { enabled: false })).enabled, false);
    assert.ok((await client.webhooks.endpoints.list()).some((e) => e.id === endpoint.id));
    const rotated = await client.webhooks.endpoints.rotateSecret(endpoint.id);
    assert.equal(rotated.endpoint_id, endpoint.id);
    assert.ok(Array.isArray((await client.webhooks.deliveries.list({ endpointId: endpoint.id })).items));
    await client.webhooks.endpoints.delete(endpoint.id);
    const audit = await client.audit.list({ limit: 50 });
    assert.ok(audit.items.some((e) => e.action === 'cli_auth.approve'));
  });

  test('events.stream yields the live events (resuming after lastEventId)', async () => {
    const controller = new AbortController();
    const seen: { id: string; event: string; data: any }[] = [];
    const reading = (async () => {
      for await (const event of client.events.stream({ lastEventId: 0, signal: controller.signal })) {
        seen.push(event as { id: string; event: string; data: any });
        if (event.event === 'api_key.created' && (event.data as any)?.data?.description === 'streamed') break;
      }
    })();
    await client.apiKeys.create({ description: 'streamed' });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      reading,
      new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`no event; saw ${JSON.stringify(seen)}`)), 10_000))),
    ]).finally(() => clearTimeout(timer));
    controller.abort();
    assert.ok(seen.length >= 2, 'earlier events were replayed after id 0');
    assert.ok(Number(seen[0]!.id) > 0);
  });

  test('health', async () => {
    assert.ok(await client.health());
  });
});
