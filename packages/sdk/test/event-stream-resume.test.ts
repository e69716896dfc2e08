/**
 * `events.stream` against a local node:http server that ends or breaks its event streams: the client opens the
 * stream again with Last-Event-ID set to the last event it saw (after the server's `retry:` wait), so no event is
 * lost or repeated; `reconnect: false` ends with the stream; a server that keeps failing is given up on after
 * MAX_EVENT_STREAM_RECONNECTS tries in a row.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { MAX_EVENT_STREAM_RECONNECTS, NetworkError, Sandboxd, type StreamedEvent } from '../src/index.ts';

describe('the event stream reconnects', () => {
  let server: http.Server;
  let client: Sandboxd;
  /** The Last-Event-ID of each request. */
  let asked: (string | undefined)[] = [];
  let mode: 'two-then-end' | 'cut' | 'refuse' = 'two-then-end';

  before(async () => {
    server = http.createServer((req, res) => {
      const last = req.headers['last-event-id'] as string | undefined;
      asked.push(last);
      if (mode === 'refuse') {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'down', code: 'UNAVAILABLE' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('retry: 10\n: hello\n\n');
      const from = Number(last ?? 0);
      for (const id of [from + 1, from + 2]) res.write(`id: ${id}\nevent: vm.started\ndata: {"vm_id":"vm-${id}","at_seconds":${id}}\n\n`);
      // A moment later, so the events are on their way before the connection is reset.
      if (mode === 'cut') setTimeout(() => res.destroy(), 20);
      else res.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new Sandboxd({ apiKey: 'k', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 0 });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    asked = [];
  });

  async function take(count: number, options: Parameters<Sandboxd['events']['stream']>[0] = {}): Promise<StreamedEvent[]> {
    const events: StreamedEvent[] = [];
    for await (const event of client.events.stream(options)) {
      events.push(event);
      if (events.length === count) break;
    }
    return events;
  }

  test('a stream the server ends is opened again after the last event seen: nothing lost, nothing twice', async () => {
    mode = 'two-then-end';
    const events = await take(5);
    assert.deepEqual(
      events.map((e) => e.id),
      ['1', '2', '3', '4', '5'],
    );
    assert.deepEqual(asked, [undefined, '2', '4']);
    const data = events[0]!.data as { vm_id: string; vmId: string; atMs: number };
    assert.equal(data.vmId, 'vm-1', 'event data reads in camelCase too');
    assert.equal(data.atMs, 1000);
  });

  test('a broken connection is resumed the same way, from the given lastEventId on', async () => {
    mode = 'cut';
    const events = await take(4, { lastEventId: 10 });
    assert.deepEqual(
      events.map((e) => e.id),
      ['11', '12', '13', '14'],
    );
    assert.deepEqual(asked, ['10', '12']);
  });

  test('reconnect: false ends the loop with the stream', async () => {
    mode = 'two-then-end';
    const events: StreamedEvent[] = [];
    for await (const event of client.events.stream({ reconnect: false })) events.push(event);
    assert.equal(events.length, 2);
    assert.equal(asked.length, 1);
  });

  test('the first answer’s error is thrown at once; a server that keeps failing after a break is given up on', async () => {
    mode = 'refuse';
    await assert.rejects(take(1), (error: unknown) => error instanceof NetworkError && asked.length === 1);
    mode = 'cut';
    asked = [];
    const events: StreamedEvent[] = [];
    const failed = await (async () => {
      for await (const event of client.events.stream()) {
        events.push(event);
        if (events.length === 2) mode = 'refuse';
      }
    })().catch((error: unknown) => error);
    assert.ok(failed instanceof NetworkError, String(failed));
    assert.match(failed.message, /broke off/);
    assert.equal(asked.length, 1 + MAX_EVENT_STREAM_RECONNECTS, 'the first connection, then the reconnects');
  });
});
