// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/** A session that leaves out its lifetime, memory or vCPUs gets the server's configured defaults. */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

let server: TestServer;
let apiKey: string;

before(async () => {
  server = await startTestServer({ config: { defaultVmLifetimeSeconds: 120, defaultVcpus: 1, defaultMemoryMb: 256 } });
  ({ apiKey } = await server.createUserWithKey('defaults'));
});
after(() => server.close());

test('a session created without settings gets SANDBOXD_DEFAULT_VM_LIFETIME_SECONDS, _VCPUS and _MEMORY_MB', async () => {
  const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: {} });
  assert.equal(created.status, 200, created.text);
  assert.deepEqual(
    {
      lifetime: created.body.vm_lifetime_seconds,
      vcpus: created.body.vcpu_count,
      memory: created.body.memory_mb,
      prewarm: created.body.prewarm,
      metadata: created.body.metadata,
    },
    { lifetime: 120, vcpus: 1, memory: 256, prewarm: false, metadata: {} },
  );
});

test('what the request gives wins over the defaults', async () => {
  const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vm_lifetime_seconds: 60, vcpu_count: 2 } });
  assert.equal(created.status, 200, created.text);
  assert.deepEqual([created.body.vm_lifetime_seconds, created.body.vcpu_count, created.body.memory_mb], [60, 2, 256]);
});
