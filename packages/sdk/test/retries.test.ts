/**
 * Retries and time limits against a local node:http server that misbehaves on purpose: what is safe to
 * send again is, with jittered exponential back-off or Retry-After; a POST /execute that may have run is not.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, afterEach, before, describe, test } from 'node:test';
import { backoffDelayMs, NetworkError, QuotaExceededError, RateLimitError, Sandboxd, SandboxdError } from '../src/index.ts';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  at: number;
}

type Reply = (req: http.IncomingMessage, res: http.ServerResponse, n: number) => void;

const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

describe('retries', () => {
  let server: http.Server;
  let baseUrl: string;
  let seen: Seen[] = [];
  let reply: Reply = (_req, res) => json(res, 200, {});

  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, at: Date.now() });
        reply(req, res, seen.length);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    seen = [];
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = (options: { maxRetries?: number; retryDelay?: number; timeout?: number } = {}) =>
    new Sandboxd({ baseUrl, apiKey: 'sbx_sk_test', retryDelay: 20, ...options });

  test("the defaults are the spec's, and the client shows them", () => {
    const c = new Sandboxd({ baseUrl, apiKey: 'k' });
    assert.equal(c.timeout, 300_000);
    assert.equal(c.maxRetries, 3);
    assert.equal(c.retryDelay, 1000);
    assert.equal(c.baseUrl, baseUrl);
    const custom = new Sandboxd({ baseUrl: `${baseUrl}/`, apiKey: 'k', timeout: 5000, maxRetries: 0, retryDelay: 10 });
    assert.deepEqual([custom.timeout, custom.maxRetries, custom.retryDelay, custom.baseUrl], [5000, 0, 10, baseUrl]);
    assert.throws(() => new Sandboxd({ maxRetries: -1 }), RangeError);
  });

  test('SANDBOXD_URL and SANDBOXD_API_KEY are the defaults; the key goes out as X-API-Key on every request', async () => {
    const saved = { url: process.env.SANDBOXD_URL, key: process.env.SANDBOXD_API_KEY };
    process.env.SANDBOXD_URL = baseUrl;
    process.env.SANDBOXD_API_KEY = 'sbx_sk_from_env';
    try {
      const c = new Sandboxd();
      assert.equal(c.baseUrl, baseUrl);
      reply = (_req, res) => json(res, 200, []);
      await c.apiKeys.list();
      await c.sandboxes.list({ metadata: { team: 'search' } });
      assert.deepEqual(
        seen.map((s) => s.headers['x-api-key']),
        ['sbx_sk_from_env', 'sbx_sk_from_env'],
      );
      assert.equal(new URL(seen[1]!.url, baseUrl).searchParams.get('metadata'), '{"team":"search"}');
    } finally {
      if (saved.url === undefined) delete process.env.SANDBOXD_URL;
      else process.env.SANDBOXD_URL = saved.url;
      if (saved.key === undefined) delete process.env.SANDBOXD_API_KEY;
      else process.env.SANDBOXD_API_KEY = saved.key;
    }
    assert.equal(new Sandboxd().baseUrl, 'http://127.0.0.1:8080', 'the default URL');
  });

  test('a GET that fails twice with 503 succeeds on the third try, backing off exponentially with jitter', async () => {
    reply = (_req, res, n) => (n <= 2 ? json(res, 503, { detail: 'busy', code: 'SERVICE_UNAVAILABLE' }) : json(res, 200, [{ id: 1 }]));
    const keys = await client({ retryDelay: 100 }).apiKeys.list();
    assert.deepEqual(keys, [{ id: 1 }]);
    assert.equal(seen.length, 3);
    const gaps = [seen[1]!.at - seen[0]!.at, seen[2]!.at - seen[1]!.at];
    // Waits are 50–100 % of 100 ms, then of 200 ms (a timer may fire a millisecond early; a busy machine, late).
    assert.ok(gaps[0]! >= 48 && gaps[0]! < 100 + 150, `first wait in [50, 100] ms: ${gaps.join(', ')} ms`);
    assert.ok(gaps[1]! >= 98 && gaps[1]! < 200 + 150, `second wait in [100, 200] ms: ${gaps.join(', ')} ms`);
  });

  test('each back-off is a random 50–100 % of retryDelay · 2^n, never the same for every client', () => {
    for (const [attempt, ceiling] of [
      [0, 1000],
      [1, 2000],
      [3, 8000],
    ] as const) {
      assert.equal(
        backoffDelayMs(1000, attempt, () => 0),
        ceiling / 2,
        'the shortest wait is half',
      );
      assert.ok(backoffDelayMs(1000, attempt, () => 0.999_999) <= ceiling, 'the longest is the whole');
      for (let i = 0; i < 200; i++) {
        const delay = backoffDelayMs(1000, attempt);
        assert.ok(delay >= ceiling / 2 && delay <= ceiling, `${delay} in [${ceiling / 2}, ${ceiling}]`);
      }
    }
    const spread = new Set(Array.from({ length: 20 }, () => backoffDelayMs(1000, 2)));
    assert.ok(spread.size > 10, 'clients that failed together do not come back together');
  });

  test('after maxRetries the last error is thrown (503 is a NetworkError)', async () => {
    reply = (_req, res) => json(res, 503, { detail: 'down', code: 'SERVICE_UNAVAILABLE' });
    const error = await client({ maxRetries: 2 })
      .apiKeys.list()
      .catch((e: unknown) => e);
    assert.ok(error instanceof NetworkError, String(error));
    assert.equal(error.status, 503);
    assert.equal(seen.length, 3);
  });

  test('a POST /execute that gets a 503 (it may have run) is not sent again', async () => {
    reply = (_req, res) => json(res, 503, { detail: 'upstream failed' });
    const error = await client()
      .execute('print(1)', { sessionId: 's' })
      .catch((e: unknown) => e);
    assert.ok(error instanceof NetworkError);
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.method, 'POST');
    assert.equal(seen[0]!.url, '/execute');
  });

  test('502 and 504 on POST are not retried either; 500 is not retried at all', async () => {
    for (const status of [502, 504]) {
      seen = [];
      reply = (_req, res) => json(res, status, { detail: 'gateway' });
      await client()
        .sessions.create()
        .catch(() => {});
      assert.equal(seen.length, 1, `POST with ${status}`);
    }
    seen = [];
    reply = (_req, res) => json(res, 500, { detail: 'bug', code: 'INTERNAL_ERROR' });
    const error = await client()
      .apiKeys.list()
      .catch((e: unknown) => e);
    assert.ok(error instanceof NetworkError);
    assert.equal(seen.length, 1);
  });

  test('429 RATE_LIMITED is retried after Retry-After, even for POST /execute (it did not run)', async () => {
    reply = (_req, res, n) =>
      n === 1
        ? json(res, 429, { detail: 'slow down', code: 'RATE_LIMITED', retry_after: 1 }, { 'retry-after': '1' })
        : json(res, 200, { stdout: '1\n', stderr: '', exit_code: 0, status: 'completed', execution_id: 7, session_id: 's' });
    const result = await client({ retryDelay: 5 }).execute('print(1)', { sessionId: 's' });
    assert.equal(result.stdout, '1\n');
    assert.equal(seen.length, 2);
    assert.ok(seen[1]!.at - seen[0]!.at >= 950, 'waited as Retry-After said, not retryDelay');
  });

  test('with no retries left, 429 is a RateLimitError carrying retryAfter', async () => {
    reply = (_req, res) => json(res, 429, { detail: 'slow down', code: 'RATE_LIMITED' }, { 'retry-after': '17' });
    const error = await client({ maxRetries: 0 })
      .apiKeys.list()
      .catch((e: unknown) => e);
    assert.ok(error instanceof RateLimitError);
    assert.equal(error.retryAfter, 17);
  });

  test('a Retry-After longer than a minute is not waited out: the error goes to the caller', async () => {
    reply = (_req, res) => json(res, 429, { detail: 'slow down', code: 'RATE_LIMITED' }, { 'retry-after': '3600' });
    const error = await client()
      .apiKeys.list()
      .catch((e: unknown) => e);
    assert.ok(error instanceof RateLimitError);
    assert.equal(seen.length, 1);
  });

  test('429 QUOTA_EXCEEDED is not retried (waiting does not free a VM)', async () => {
    reply = (_req, res) => json(res, 429, { detail: 'quota', code: 'QUOTA_EXCEEDED' });
    const error = await client()
      .vms.create({ sessionId: 's' })
      .catch((e: unknown) => e);
    assert.ok(error instanceof QuotaExceededError);
    assert.equal(seen.length, 1);
  });

  test('a connection refused before anything was sent is retried, for any method', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    let attempts = 0;
    const counting: typeof fetch = (input, init) => {
      attempts++;
      return fetch(input, init);
    };
    const c = new Sandboxd({ baseUrl: `http://127.0.0.1:${port}`, apiKey: 'k', retryDelay: 5, maxRetries: 2, fetch: counting });
    const error = await c.execute('print(1)').catch((e: unknown) => e);
    assert.ok(error instanceof NetworkError, String(error));
    assert.match(error.message, /ECONNREFUSED/);
    assert.equal(error.status, undefined);
    assert.equal(attempts, 3, 'POST /execute was never sent, so it was tried again');
  });

  test('a request that outlives the timeout is a NetworkError with timedOut, not retried', async () => {
    reply = () => {}; // never answers
    const started = Date.now();
    const error = await client({ timeout: 200 })
      .apiKeys.list()
      .catch((e: unknown) => e);
    assert.ok(error instanceof NetworkError);
    assert.equal(error.timedOut, true);
    assert.equal(seen.length, 1);
    assert.ok(Date.now() - started < 2000);
  });

  test('a non-JSON error page still becomes a classed error with the status', async () => {
    reply = (_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>nope</h1>');
    const error = await client()
      .vms.get('x')
      .catch((e: unknown) => e);
    assert.ok(error instanceof SandboxdError);
    assert.equal(error.status, 404);
    assert.equal(error.name, 'NotFoundError');
  });
});
