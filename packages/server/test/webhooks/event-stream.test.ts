// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * GET /v1/events/stream: the caller's events live as Server-Sent Events, resumable with Last-Event-ID,
 * every user's for an administrator with all=true, and closed cleanly when the server stops.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { FAST, triggerEvent } from './fixtures.ts';

interface SseMessage {
  id: string;
  event: string;
  data: any;
  /** Date.now() when it arrived. */
  wallMs: number;
}

/**
 * An open stream: messages as they arrive, and a way to wait for some. node:http rather than fetch:
 * undici opens a spare connection that it never uses, which keeps a closing server waiting seconds.
 */
async function openStream(server: TestServer, apiKey: string, options: { lastEventId?: string; query?: string } = {}) {
  const messages: SseMessage[] = [];
  let ended = false;
  let request!: http.ClientRequest;
  const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
    request = http.get(
      `${server.baseUrl}/v1/events/stream${options.query ?? ''}`,
      { headers: { 'x-api-key': apiKey, ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}) } },
      resolve,
    );
    request.on('error', reject);
  });
  const reading = new Promise<void>((resolve) => {
    let buffer = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => {
      buffer += chunk;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          if (colon > 0) fields[line.slice(0, colon)] = line.slice(colon + 1).trimStart();
        }
        if (fields.data) messages.push({ id: fields.id!, event: fields.event!, data: JSON.parse(fields.data), wallMs: Date.now() });
      }
    });
    response.on('close', () => {
      ended = true;
      resolve();
    });
  });
  return {
    response,
    messages,
    get ended() {
      return ended;
    },
    async waitFor(count: number, timeoutMs = 3000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`got ${messages.length} messages, expected ${count}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return messages;
    },
    async close() {
      request.destroy();
      await reading;
    },
    reading,
  };
}

describe('event stream (SSE)', () => {
  let server: TestServer;
  let alice: { userId: number; apiKey: string };
  let bob: { userId: number; apiKey: string };
  let root: { apiKey: string };

  before(async () => {
    server = await startTestServer({ config: FAST });
    alice = await server.createUserWithKey('alice');
    bob = await server.createUserWithKey('bob');
    const admin = await server.services.users.create({ username: 'root', password: 'root-password-long', isAdmin: true });
    root = { apiKey: (await server.services.apiKeys.create(admin.id, {})).fullKey };
  });
  after(() => server.close());

  test("delivers the caller's events live (not other users'), and resumes after Last-Event-ID", async (t) => {
    const stream = await openStream(server, alice.apiKey);
    assert.equal(stream.response.statusCode, 200);
    assert.match(stream.response.headers['content-type']!, /^text\/event-stream/);

    await triggerEvent(server, bob.apiKey);
    const keyId = await triggerEvent(server, alice.apiKey);
    const [message] = await stream.waitFor(1);
    t.diagnostic(`commit → stream latency: ${message!.wallMs - Date.parse(message!.data.timestamp)} ms`);
    assert.equal(message!.event, 'api_key.created');
    assert.match(message!.id, /^\d+$/);
    assert.equal(message!.data.type, 'api_key.created');
    assert.equal(message!.data.data.api_key_id, keyId);
    assert.equal(message!.data.user_id, alice.userId);
    assert.match(message!.data.id, /^evt_/);
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(stream.messages.length, 1, "bob's event is not on alice's stream");
    await stream.close();

    // While disconnected, two more events happen; reconnecting with Last-Event-ID replays them in order.
    const missed = [await triggerEvent(server, alice.apiKey), await triggerEvent(server, alice.apiKey)];
    const resumed = await openStream(server, alice.apiKey, { lastEventId: message!.id });
    const replayed = await resumed.waitFor(2);
    assert.deepEqual(
      replayed.map((m) => m.data.data.api_key_id),
      missed,
    );
    assert.ok(Number(replayed[0]!.id) > Number(message!.id) && Number(replayed[1]!.id) > Number(replayed[0]!.id));
    await resumed.close();
  });

  test("all=true: every user's events for an administrator, 403 for anyone else", async () => {
    assert.equal((await call(server, 'GET', '/v1/events/stream?all=true', { apiKey: alice.apiKey })).status, 403);
    const stream = await openStream(server, root.apiKey, { query: '?all=true' });
    await triggerEvent(server, bob.apiKey);
    const [message] = await stream.waitFor(1);
    assert.equal(message!.data.user_id, bob.userId);
    await stream.close();
  });

  test('a bad Last-Event-ID is refused', async () => {
    const res = await call(server, 'GET', '/v1/events/stream', { apiKey: alice.apiKey, headers: { 'last-event-id': 'abc' } });
    assert.equal(res.status, 400);
  });

  test('closing the server ends open streams cleanly and promptly', async () => {
    const other = await startTestServer({ config: FAST });
    const user = await other.createUserWithKey('dora');
    const stream = await openStream(other, user.apiKey);
    assert.equal(stream.response.statusCode, 200);
    const started = performance.now();
    await other.close();
    await stream.reading;
    assert.ok(stream.ended);
    assert.ok(performance.now() - started < 1000, `closed in ${Math.round(performance.now() - started)} ms`);
  });
});
