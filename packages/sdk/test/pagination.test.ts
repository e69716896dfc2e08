/**
 * Paged lists against a local node:http server that pages 7 templates by limit/offset and 5 audit events by cursor:
 * awaiting a list answers its first page as before, iterating walks every page and asks for the next one only
 * when the loop reaches it, and leaving the loop early asks for nothing more.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, test } from 'node:test';
import { Sandboxd } from '../src/index.ts';

const TEMPLATES = Array.from({ length: 7 }, (_, i) => ({ name: `t${i}` }));
const EVENTS = Array.from({ length: 5 }, (_, i) => ({ id: i, action: 'session.create' }));

describe('paged lists', () => {
  let server: http.Server;
  let client: Sandboxd;
  let requests: URL[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      const url = new URL(req.url!, 'http://x');
      requests.push(url);
      const limit = Number(url.searchParams.get('limit') ?? 50);
      let body: unknown;
      if (url.pathname === '/v1/templates') {
        const offset = Number(url.searchParams.get('offset') ?? 0);
        body = TEMPLATES.slice(offset, offset + limit);
      } else if (url.pathname === '/v1/audit/events') {
        const from = Number(url.searchParams.get('cursor') ?? 0);
        const items = EVENTS.slice(from, from + limit);
        body = { items, next_cursor: from + limit < EVENTS.length ? String(from + limit) : null };
      } else {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'no', code: 'NOT_FOUND' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = new Sandboxd({ apiKey: 'k', baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxRetries: 0 });
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    requests = [];
  });

  test('awaiting answers the first page, as a promise would; nothing is asked before it is used', async () => {
    const list = client.templates.list({ limit: 3 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(requests.length, 0, 'no request until awaited or iterated');
    assert.deepEqual(
      (await list).map((t) => t.name),
      ['t0', 't1', 't2'],
    );
    assert.deepEqual(await client.templates.list({ limit: 3, offset: 6 }).then((page) => page.length), 1);
  });

  test('iterating walks every page by offset; a short page is the last', async () => {
    const ids: string[] = [];
    for await (const template of client.templates.list({ limit: 3 })) ids.push(template.name);
    assert.deepEqual(
      ids,
      TEMPLATES.map((t) => t.name),
    );
    assert.deepEqual(
      requests.map((url) => url.searchParams.get('offset') ?? '0'),
      ['0', '3', '6'],
    );
    requests = [];
    assert.equal((await client.templates.list().toArray()).length, 7, 'without a limit, pages run until an empty one');
    assert.equal(requests.length, 2);
  });

  test('a cursor list: the page object when awaited, every item when iterated; leaving early asks no more', async () => {
    const page = await client.audit.list({ limit: 2 });
    assert.equal(page.items.length, 2);
    assert.equal(page.next_cursor, '2');
    requests = [];
    const ids: number[] = [];
    for await (const event of client.audit.list({ limit: 2 })) ids.push(event.id);
    assert.deepEqual(ids, [0, 1, 2, 3, 4]);
    assert.deepEqual(
      requests.map((url) => url.searchParams.get('cursor')),
      [null, '2', '4'],
    );
    requests = [];
    for await (const event of client.audit.list({ limit: 2 })) if (event.id === 1) break;
    assert.equal(requests.length, 1, 'the second page is never asked for');
    assert.deepEqual(
      (await client.audit.list({ limit: 2 }).toArray(3)).map((e) => e.id),
      [0, 1, 2],
    );
  });

  test('a failed page rejects the await and the loop alike', async () => {
    await assert.rejects(client.webhooks.deliveries.list(), /no/);
    await assert.rejects(async () => {
      for await (const delivery of client.webhooks.deliveries.list()) void delivery;
    }, /no/);
  });
});
