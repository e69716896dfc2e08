// test-lane: light (one in-process Fastify app, no listener)
/**
 * The internal command contract (contract/cluster-commands.ts) as the internal listener validates it, with the
 * app's own validator: each op is checked against its own schema only (the browser call's argument against the
 * public route's very schema, its defaults filled in as there), and anything else is refused before a handler runs.
 */
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify from 'fastify';
import { registerErrorHandling } from '../../src/api/error-handler.ts';
import { partAwareSchemaController } from '../../src/api/validator-compiler.ts';
import { INTERNAL_COMMANDS_PATH, InternalCommand } from '../../src/contract/cluster-commands.ts';

const principal = { userId: 7, username: 'alice', plan: 'pro', isAdmin: false, via: 'api_key', apiKeyId: 3 };
const policy = { allowPackageManagers: false, allowHttp: true, allowHttps: true, allowedDomains: ['example.com'], allowedCidrs: [], allowedPorts: [] };

describe('internal commands: one body, told apart by op, each op validated with its own schema', () => {
  const app = Fastify({ schemaController: partAwareSchemaController() }).withTypeProvider<TypeBoxTypeProvider>();
  before(async () => {
    registerErrorHandling(app);
    app.post(INTERNAL_COMMANDS_PATH, { schema: { body: InternalCommand } }, async (request) => request.body);
    await app.ready();
  });
  const send = async (body: unknown) => {
    const response = await app.inject({ method: 'POST', url: INTERNAL_COMMANDS_PATH, payload: body as object });
    return { status: response.statusCode, body: response.json() };
  };

  test('each op is accepted with its fields', async () => {
    const start = await send({
      op: 'vm.start',
      principal,
      session_id: 's-1',
      spec: { vcpuCount: 1, memoryMb: 512, lifetimeSeconds: 60, egressPolicy: policy },
    });
    assert.equal(start.status, 200, JSON.stringify(start.body));
    const read = await send({ op: 'egress.policy', principal, vm_id: 'vm-1', policy: null });
    assert.equal(read.status, 200, JSON.stringify(read.body));
    const close = await send({ op: 'browser.call', principal, call: { method: 'closeSession', argument: 'bs-1' } });
    assert.equal(close.status, 200, JSON.stringify(close.body));
  });

  test("a browser call's argument is the public route's body, its defaults filled in", async () => {
    const navigate = await send({ op: 'browser.call', principal, call: { method: 'navigate', argument: { session_id: 'bs-1', url: 'https://example.com/' } } });
    assert.equal(navigate.status, 200, JSON.stringify(navigate.body));
    assert.equal(navigate.body.call.argument.wait_until, 'load');
    assert.equal(typeof navigate.body.call.argument.wait_timeout, 'number');
    const missing = await send({ op: 'browser.call', principal, call: { method: 'navigate', argument: { session_id: 'bs-1' } } });
    assert.equal(missing.status, 422, JSON.stringify(missing.body));
    assert.ok(JSON.stringify(missing.body.detail).includes('url'), JSON.stringify(missing.body));
  });

  test('an unknown op or browser method, or a field of another op, is refused', async () => {
    assert.equal((await send({ op: 'vm.kill', principal, vm_id: 'vm-1' })).status, 422);
    assert.equal((await send({ principal, vm_id: 'vm-1', policy: null })).status, 422);
    assert.equal((await send({ op: 'browser.call', principal, call: { method: 'render', argument: {} } })).status, 422);
    // The egress op's fields under the start op: the start op's schema is the one applied.
    assert.equal((await send({ op: 'vm.start', principal, vm_id: 'vm-1', policy: null })).status, 422);
    assert.equal((await send({ op: 'vm.start', principal, session_id: 's-1', spec: { vcpuCount: 65, memoryMb: 512, lifetimeSeconds: 60 } })).status, 422);
    assert.equal((await send({ op: 'egress.policy', principal: { ...principal, via: 'cookie' }, vm_id: 'vm-1', policy: null })).status, 422);
  });
});
