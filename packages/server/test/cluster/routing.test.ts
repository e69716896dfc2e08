/**
 * Requests for a VM on another node, on real VMs: three nodes on one PostgreSQL (own ports, data directories,
 * engines), a session created through node A while A is drained, so placed on node B, and everything a client
 * does with it sent to A and to C: Python and bash executes, upload and download byte-exact, an app preview, a
 * terminal over its WebSocket. A and C reach the VM through B's internal endpoint (on B's internal listener,
 * signed with the cluster secret); a request to that endpoint without the signature, or with a user's key, is
 * refused, and B's public listener does not serve it. Then placement (a drained node's new VMs start on the other
 * node; undrained, they come back) and kills (through the owner's pg-boss queue; a kill in the wrong queue is
 * re-dispatched once to the owner under strict ownership), a browser session on B driven through A and C (its
 * page is a connection B holds), and at the end the books: every execute answered through any node has its one
 * record, and every event of the run reached alice's webhook receiver exactly once (each node dispatches, one
 * delivery per event, none twice).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WebSocket } from 'ws';
import { AGENT_RPC_PATH } from '../../src/cluster/agent-rpc-messages.ts';
import { startPostgres, type PostgresServer } from '../helpers/postgres.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { createEndpoint, FAST } from '../webhooks/fixtures.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const APP_PORT = 8123;
const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('cluster routing: a VM placed on node B used through nodes A and C (real VMs, PostgreSQL)', () => {
  let postgres: PostgresServer;
  let a: TestServer;
  let b: TestServer;
  let c: TestServer;
  let alice: string;
  let bob: string;
  let sessionId: string;
  let vmId: string;
  let receiver: Receiver;
  let endpointId: string;
  let firstEventId: number;
  /** The id of every execution a node answered for alice (the ledger the store must match at the end). */
  const executions = new Set<string>();

  /** POST /execute through `node`, keeping the record's id in the ledger. */
  async function execute(node: TestServer, json: Record<string, unknown>, apiKey = alice) {
    const answer = await call(node, 'POST', '/execute', { apiKey, json });
    if (answer.status === 200 && apiKey === alice) executions.add(String(answer.body.execution_id));
    return answer;
  }

  before(async () => {
    postgres = await startPostgres();
    const node = (nodeId: string) => startTestServer({ config: { ...FAST, databaseUrl: postgres.url, nodeId, strictKillOwnership: true } });
    b = await node('node-b');
    a = await node('node-a');
    c = await node('node-c');
    alice = (await b.createUserWithKey('alice', 'pro')).apiKey;
    bob = (await b.createUserWithKey('bob', 'pro')).apiKey;
    receiver = await startReceiver();
    endpointId = (await createEndpoint(a, alice, receiver.url, ['*'])).id;
    // The books start here: events from before the endpoint existed have no deliveries.
    firstEventId =
      (
        await a.services.database.db
          .selectFrom('events')
          .select((e) => e.fn.max('id').as('last'))
          .executeTakeFirstOrThrow()
      ).last ?? 0;
    // C is drained for the whole test (it only routes); A only while the session's VM is placed.
    await c.services.sandbox.nodes.setDrained('node-c', true);
    await a.services.sandbox.nodes.setDrained('node-a', true);
    const created = await call(a, 'POST', '/v1/sessions/session', { apiKey: alice, json: { vcpu_count: 1, vm_lifetime_seconds: 600 } });
    assert.equal(created.status, 200, created.text);
    sessionId = created.body.session_id;
    const first = await execute(a, { session_id: sessionId, command: 'x = 6' });
    assert.equal(first.status, 200, first.text);
    await a.services.sandbox.nodes.setDrained('node-a', false);
    const vms = await a.services.database.db.selectFrom('vms').select(['id', 'node_id']).where('session_id', '=', sessionId).execute();
    assert.equal(vms.length, 1);
    assert.equal(vms[0]!.node_id, 'node-b');
    vmId = vms[0]!.id;
  });
  after(async () => {
    await a?.close();
    await c?.close();
    await b?.close();
    await receiver?.close();
    await postgres?.stop();
  });

  test('the three nodes are registered live in the shared node table', async () => {
    const rows = await a.services.sandbox.nodes.list();
    assert.deepEqual(
      rows.map((n) => [n.id, n.state]),
      [
        ['node-a', 'live'],
        ['node-b', 'live'],
        ['node-c', 'live'],
      ],
    );
    assert.equal(rows.find((n) => n.id === 'node-b')!.internalUrl, b.internalUrl);
    assert.notEqual(b.internalUrl, b.baseUrl, 'internal traffic has a listener of its own');
  });

  test('Python state and bash exit codes through nodes A and C', async () => {
    for (const node of [a, c]) {
      const python = await execute(node, { session_id: sessionId, command: 'print(x * 7)' });
      assert.equal(python.status, 200, python.text);
      assert.equal(python.body.stdout.trim(), '42');
      const bash = await execute(node, { session_id: sessionId, language: 'bash', command: 'hostname; echo err >&2; exit 3' });
      assert.equal(bash.status, 200, bash.text);
      assert.equal(bash.body.exit_code, 3);
      assert.equal(bash.body.stdout.trim(), vmId);
      assert.equal(bash.body.stderr.trim(), 'err');
      const record = await call(node === a ? c : a, 'GET', `/v1/executions/${bash.body.execution_id}`, { apiKey: alice });
      assert.equal(record.status, 200, record.text);
    }
    const vms = await a.services.database.db.selectFrom('vms').select('id').where('session_id', '=', sessionId).execute();
    assert.equal(vms.length, 1, 'every request reached the one VM on B');
  });

  for (const via of ['A', 'C'] as const) {
    test(`upload and download through node ${via} are byte-exact`, async () => {
      const node = via === 'A' ? a : c;
      await uploadDownload(node);
    });
  }

  async function uploadDownload(node: TestServer): Promise<void> {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const form = new FormData();
    form.append('session_id', sessionId);
    form.append('remote_path', '/root/blob.bin');
    form.append('file', new Blob([data]), 'blob.bin');
    const uploaded = await fetch(`${node.baseUrl}/v1/upload`, { method: 'POST', headers: { 'x-api-key': alice }, body: form });
    assert.equal(uploaded.status, 200, await uploaded.text());
    const checked = await execute(b, { session_id: sessionId, language: 'bash', command: 'sha256sum /root/blob.bin' });
    assert.equal(checked.body.stdout.split(' ')[0], sha(data), 'the file landed in the VM on node B');
    const downloaded = await fetch(`${node.baseUrl}/download`, {
      method: 'POST',
      headers: { 'x-api-key': alice, 'content-type': 'application/json' },
      body: JSON.stringify({ session_id: sessionId, filename: '/root/blob.bin' }),
    });
    assert.equal(downloaded.status, 200);
    const body = Buffer.from(await downloaded.arrayBuffer());
    const bytes = downloaded.headers.get('content-type')?.includes('json')
      ? Buffer.from((JSON.parse(body.toString()) as { content: string }).content, 'base64')
      : body;
    assert.equal(sha(bytes), sha(data));
  }

  test('an app in the VM is previewed through nodes A and C', async () => {
    const started = await execute(a, {
      session_id: sessionId,
      language: 'bash',
      command: `mkdir -p /tmp/site && echo cluster-page-ok > /tmp/site/index.html && cd /tmp/site && (nohup python3 -m http.server ${APP_PORT} >/tmp/site.log 2>&1 &) ; for i in $(seq 100); do curl -s -o /dev/null localhost:${APP_PORT}/ && break; sleep 0.2; done; curl -s localhost:${APP_PORT}/`,
    });
    assert.match(started.body.stdout, /cluster-page-ok/, started.text);
    for (const node of [a, c]) {
      const page = await fetch(`${node.baseUrl}/v1/app/${sessionId}/${APP_PORT}/`, { headers: { 'x-api-key': alice } });
      assert.equal(page.status, 200);
      assert.match(await page.text(), /cluster-page-ok/);
    }
    const stranger = await fetch(`${a.baseUrl}/v1/app/${sessionId}/${APP_PORT}/`, { headers: { 'x-api-key': bob } });
    assert.equal(stranger.status, 404);
  });

  test('a terminal created through node A and attached through node C runs in the VM on node B', async () => {
    const created = await call(a, 'POST', `/v1/sessions/${sessionId}/pty/sessions`, { apiKey: alice, json: { cols: 80, rows: 24 } });
    assert.equal(created.status, 200, created.text);
    assert.ok(created.body.websocket_url.startsWith(a.baseUrl.replace('http', 'ws')), created.body.websocket_url);
    // Its connect token is valid cluster-wide: the attach goes to another node than the create.
    const socket = new WebSocket(
      `${created.body.websocket_url.replace(a.baseUrl.replace('http', 'ws'), c.baseUrl.replace('http', 'ws'))}?token=${created.body.connect_token}`,
    );
    let text = '';
    socket.on('message', (data, isBinary) => isBinary && (text += data.toString()));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(Buffer.from('echo "cluster-$((40+2))"; hostname\r'), { binary: true });
    await waitUntil('terminal output', async () => /cluster-42/.test(text) && text.includes(vmId), 20_000, 50);
    socket.close();
    const listed = await call(c, 'GET', `/v1/sessions/${sessionId}/pty/sessions`, { apiKey: alice });
    assert.equal(listed.status, 200, listed.text);
  });

  test("the internal endpoint refuses unsigned requests and users' keys; the public listener does not serve it", async () => {
    const attempts: [string, Record<string, string>, number][] = [
      [b.internalUrl!, {}, 401],
      [b.internalUrl!, { 'x-api-key': alice }, 401],
      [b.internalUrl!, { 'x-sandboxd-node': 'node-a', 'x-sandboxd-time': String(Date.now()), 'x-sandboxd-signature': 'forged' }, 401],
      [b.baseUrl, a.services.internalAuth.sign({ method: 'GET', pathWithQuery: `${AGENT_RPC_PATH}/${vmId}/exec`, destination: 'node-b', body: '{}' }), 404],
    ];
    for (const [base, headers, expected] of attempts) {
      const status = await new Promise<number>((resolve) => {
        const socket = new WebSocket(`${base.replace('http', 'ws')}${AGENT_RPC_PATH}/${vmId}/exec`, { headers });
        socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
        socket.once('open', () => (socket.close(), resolve(101)));
        socket.once('error', () => resolve(-1));
      });
      assert.equal(status, expected, `${base} ${JSON.stringify(headers)}`);
    }
  });

  test('another user gets 404 through any node', async () => {
    for (const node of [a, b, c]) {
      const other = await execute(node, { session_id: sessionId, command: 'print(1)' }, bob);
      assert.equal(other.status, 404, other.text);
    }
  });

  test(
    "the egress policy of B's VM is changed through node A and read through node C (B enforces it)",
    { skip: process.getuid?.() !== 0 ? 'needs root (nftables)' : false },
    async () => {
      const put = await call(a, 'PUT', `/v1/vms/${vmId}/egress`, { apiKey: alice, json: { allowed_domains: ['allowed.test'] } });
      assert.equal(put.status, 200, put.text);
      assert.equal(put.body.enforced, true, 'enforced on B, where the VM runs');
      const read = await call(c, 'GET', `/v1/vms/${vmId}/egress`, { apiKey: alice });
      assert.deepEqual([read.body.allowed_domains, read.body.enforced], [['allowed.test'], true]);
      // B's policy resolver now answers NXDOMAIN for any other name.
      const lookup = await execute(c, { session_id: sessionId, language: 'bash', command: 'getent hosts blocked.test || echo refused' });
      assert.equal(lookup.body.stdout.trim(), 'refused');
      assert.equal((await call(a, 'PUT', `/v1/vms/${vmId}/egress`, { apiKey: bob, json: {} })).status, 404);
      const reopened = await call(c, 'PUT', `/v1/sessions/${sessionId}/egress`, {
        apiKey: alice,
        json: { allowed_domains: ['*'], allowed_cidrs: ['0.0.0.0/0'] },
      });
      assert.equal(reopened.status, 200, reopened.text);
      assert.deepEqual(reopened.body.updated_vm_ids, [vmId]);
      assert.equal((await call(a, 'GET', `/v1/vms/${vmId}/egress`, { apiKey: alice })).body.enforced, false, 'open again: no rules on B');
    },
  );

  test(
    'a VM created with an egress policy through drained node C holds that policy on the node it is placed on',
    { skip: process.getuid?.() !== 0 ? 'needs root (nftables)' : false },
    async () => {
      const created = await call(c, 'POST', '/v1/vms', {
        apiKey: alice,
        json: { vcpu_count: 1, vm_lifetime_seconds: 300, egress_policy: { allowed_domains: ['allowed.test'] } },
      });
      assert.equal(created.status, 200, created.text);
      const placedOn = (await a.services.database.db.selectFrom('vms').select('node_id').where('id', '=', created.body.vm_id).executeTakeFirstOrThrow())
        .node_id;
      assert.notEqual(placedOn, 'node-c', 'drained C placed the VM elsewhere');
      const read = await call(c, 'GET', `/v1/vms/${created.body.vm_id}/egress`, { apiKey: alice });
      assert.deepEqual([read.body.allowed_domains, read.body.enforced], [['allowed.test'], true]);
      const lookup = await execute(c, { session_id: created.body.session_id, language: 'bash', command: 'getent hosts blocked.test || echo refused' });
      assert.equal(lookup.body.stdout.trim(), 'refused', 'the placed VM resolves only what its policy allows');
      assert.equal((await call(c, 'POST', '/kill', { apiKey: alice, json: { session_id: created.body.session_id } })).status, 200);
    },
  );

  test('a browser session whose page node B holds is driven and closed through nodes A and C', async () => {
    const opened = await call(b, 'POST', '/v1/browser/sessions/', { apiKey: alice, json: { viewport_width: 800, viewport_height: 600 } });
    assert.equal(opened.status, 200, opened.text);
    const browserId = opened.body.session_id;
    const row = await a.services.database.db.selectFrom('browser_sessions').select('node_id').where('id', '=', browserId).executeTakeFirstOrThrow();
    assert.equal(row.node_id, 'node-b');
    const page = `data:text/html,${encodeURIComponent('<title>cluster</title><input id="name"><button onclick="document.body.dataset.done=1;document.querySelector(\'#out\').textContent=\'hello \'+document.querySelector(\'#name\').value">go</button><p id="out"></p>')}`;
    const interact = async (node: TestServer, name: string, body: Record<string, unknown>, apiKey = alice) =>
      call(node, 'POST', `/v1/browser/interactions/${name}`, { apiKey, json: { session_id: browserId, ...body } });
    const navigated = await interact(a, 'navigate', { url: page });
    assert.equal(navigated.status, 200, navigated.text);
    assert.equal(navigated.body.data.title, 'cluster');
    assert.equal((await interact(c, 'type', { selector: '#name', text: 'nodes' })).status, 200);
    assert.equal((await interact(a, 'click', { selector: 'button' })).status, 200);
    const extracted = await interact(c, 'extract', { selector: '#out' });
    assert.equal(extracted.status, 200, extracted.text);
    assert.equal(extracted.body.elements[0].text, 'hello nodes', 'the page B holds saw what A and C sent');
    const shot = await interact(a, 'screenshot', { format: 'png' });
    assert.equal(shot.status, 200, shot.text);
    assert.equal(Buffer.from(shot.body.screenshot, 'base64').subarray(1, 4).toString(), 'PNG');
    // Errors come back as the owner gave them; another user's session stays 404 through any node.
    const missing = await interact(c, 'click', { selector: '#nowhere', timeout: 500 });
    assert.equal(missing.status, 404, missing.text);
    assert.equal(missing.body.code, 'ELEMENT_NOT_FOUND');
    assert.equal((await interact(a, 'extract', { selector: '#out' }, bob)).status, 404);
    const closed = await call(c, 'DELETE', `/v1/browser/sessions/${browserId}`, { apiKey: alice });
    assert.equal(closed.status, 200, closed.text);
    const ended = await a.services.database.db.selectFrom('browser_sessions').select(['status', 'vm_id']).where('id', '=', browserId).executeTakeFirstOrThrow();
    assert.equal(ended.status, 'closed');
    assert.ok(!b.services.sandbox.engine.liveVmIds().includes(ended.vm_id), "the browser's VM is gone from node B");
  });

  /** Where a new session's VM runs when it is created and first used through node B. */
  async function newSessionVia(node: TestServer): Promise<{ sessionId: string; vmId: string; nodeId: string }> {
    const created = await call(node, 'POST', '/v1/sessions/session', { apiKey: alice, json: { vcpu_count: 1, vm_lifetime_seconds: 600 } });
    assert.equal(created.status, 200, created.text);
    const ran = await execute(node, { session_id: created.body.session_id, language: 'bash', command: 'hostname' });
    assert.equal(ran.status, 200, ran.text);
    const row = await node.services.database.db
      .selectFrom('vms')
      .select(['id', 'node_id'])
      .where('session_id', '=', created.body.session_id)
      .executeTakeFirstOrThrow();
    assert.equal(ran.body.stdout.trim(), row.id, 'the command ran in the VM the store records');
    return { sessionId: created.body.session_id, vmId: row.id, nodeId: row.node_id };
  }

  test('draining node B sends its new VMs to node A; undrained, they start on B again', async () => {
    const token = fs.readFileSync(path.join(b.dataDir, 'admin-token'), 'utf8').trim();
    const admin = { baseUrl: b.adminUrl! };
    assert.equal((await call(admin, 'POST', '/workers/node-b/drain', { bearer: token })).status, 200);
    const placed = await newSessionVia(b);
    assert.equal(placed.nodeId, 'node-a', 'drained B placed the VM on A');
    assert.equal((await call(admin, 'POST', '/workers/node-b/undrain', { bearer: token })).status, 200);
    const back = await newSessionVia(b);
    assert.equal(back.nodeId, 'node-b');
    for (const id of [placed.sessionId, back.sessionId])
      assert.equal((await call(b, 'POST', '/kill', { apiKey: alice, json: { session_id: id } })).status, 200);
  });

  test("a kill through node C of B's VM goes through B's queue: B kills it and records the end", async () => {
    const killed = await call(c, 'POST', '/kill', { apiKey: alice, json: { session_id: sessionId } });
    assert.equal(killed.status, 200, killed.text);
    const row = await a.services.database.db.selectFrom('vms').select(['status', 'end_reason']).where('id', '=', vmId).executeTakeFirstOrThrow();
    assert.deepEqual(row, { status: 'killed', end_reason: 'killed' });
    assert.ok(!b.services.sandbox.engine.liveVmIds().includes(vmId), 'the VM is gone from node B');
  });

  test('a kill that lands in the wrong queue is re-dispatched once to the owner (strict ownership)', async () => {
    const target = await newSessionVia(b);
    assert.equal(target.nodeId, 'node-b');
    const queue = a.services.sandbox.killQueue!;
    const jobId = await queue.dispatch('node-a', { vmId: target.vmId, from: 'test' });
    await waitUntil(
      'the VM killed by its owner',
      async () => (await a.services.database.db.selectFrom('vms').select('status').where('id', '=', target.vmId).executeTakeFirstOrThrow()).status === 'killed',
      30_000,
      100,
    );
    assert.ok(!b.services.sandbox.engine.liveVmIds().includes(target.vmId));
    await waitUntil('the job settled', async () => (await queue.job('node-a', jobId))?.state === 'completed', 10_000, 100);
    assert.deepEqual((await queue.job('node-a', jobId))!.output, { outcome: 'redispatched', to: 'node-b' });
  });
  test('the books: every execute has its one record, every event reached the webhook exactly once', async () => {
    const page = await call(c, 'GET', '/v1/executions/?limit=1000', { apiKey: alice });
    assert.equal(page.status, 200, page.text);
    const listed = new Map<string, { is_complete: boolean }>(page.body.map((record: { id: string; is_complete: boolean }) => [String(record.id), record]));
    for (const id of executions) assert.equal(listed.get(id)?.is_complete, true, `execution ${id} answered by a node has its finished record`);
    assert.ok(executions.size >= 10, `the run made ${executions.size} executes`);
    const aliceId = (await a.services.users.getByUsername('alice'))!.id;
    const events = await a.services.database.db
      .selectFrom('events')
      .select(['event_id', 'type'])
      .where('user_id', '=', aliceId)
      .where('id', '>', firstEventId)
      .execute();
    assert.ok(events.some((e) => e.type === 'vm.killed') && events.some((e) => e.type.startsWith('browser')), events.map((e) => e.type).join(', '));
    const unsettled = () =>
      a.services.database.db
        .selectFrom('webhook_deliveries')
        .select(['event_type', 'status'])
        .where('endpoint_id', '=', endpointId)
        .where('status', '!=', 'succeeded')
        .execute();
    await waitUntil('every event delivered', async () => (await unsettled()).length === 0 && receiver.requests.length >= events.length, 30_000, 200).catch(
      async (error) => {
        throw new Error(
          `${(error as Error).message}: ${events.length} events, ${receiver.requests.length} received, not delivered: ${JSON.stringify(await unsettled())}`,
        );
      },
    );
    const deliveries = (await a.services.database.db.selectFrom('webhook_deliveries').select('event_id').where('endpoint_id', '=', endpointId).execute()).map(
      (d) => d.event_id,
    );
    assert.equal(new Set(deliveries).size, deliveries.length, 'one delivery per event, never two');
    const delivered = new Set(deliveries);
    assert.deepEqual(
      events.filter((e) => !delivered.has(e.event_id)),
      [],
      'every event of the run has its delivery',
    );
    const received = receiver.requests.map((r) => r.headers['webhook-id'] as string);
    assert.equal(new Set(received).size, received.length, 'no event was sent twice (by two nodes)');
    assert.deepEqual([...received].sort(), [...deliveries].sort(), 'the receiver got every delivery');
    // The live stream of any node replays every node's events (they are one outbox).
    const streamed = await streamedEventIds(c, String(firstEventId), events.length);
    assert.deepEqual(streamed.sort(), events.map((e) => e.event_id).sort(), "node C's event stream has every node's events");
  });

  /** The event ids of `node`'s SSE stream after `lastEventId`, once `count` arrived (or 15 s passed). */
  async function streamedEventIds(node: TestServer, lastEventId: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const request = http.get(`${node.baseUrl}/v1/events/stream`, { headers: { 'x-api-key': alice, 'last-event-id': lastEventId } }, (response) => {
        let buffer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          buffer += chunk;
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const data = buffer
              .slice(0, end)
              .split('\n')
              .find((line) => line.startsWith('data:'));
            buffer = buffer.slice(end + 2);
            if (data) ids.push((JSON.parse(data.slice(5)) as { id: string }).id);
          }
          if (ids.length >= count) request.destroy();
        });
        response.on('close', resolve);
      });
      request.on('error', (error) => (ids.length >= count ? resolve() : reject(error)));
      setTimeout(() => request.destroy(), 15_000).unref();
    });
    return ids;
  }
});
