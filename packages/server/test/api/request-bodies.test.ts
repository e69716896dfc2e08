// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Bodies cost nothing before authentication and little after: a caller without a header credential is
 * refused before its body is read (or, where the body may carry the key, after a bounded part of it), and a
 * JSON body nested millions of levels deep is refused without being parsed.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const ANONYMOUS_LIMIT = 64 * 1024;
/** The finding's body: 9.8 MB, nested 4.9 M levels deep. */
const DEEP_LEVELS = 4_900_000;

interface RawExchange {
  status: number;
  body: any;
  /** Body bytes written to the socket before the answer arrived. */
  sentBeforeAnswer: number;
}

/**
 * Sends a request over a raw socket: the head, then the body in `chunkBytes` pieces, each written only
 * after the previous one drained and only while no answer has arrived. Answers what the server said and
 * how much of the body it had been sent by then.
 */
async function sendSlowly(baseUrl: string, head: string, body: Buffer, options: { chunked?: boolean; chunkBytes?: number } = {}): Promise<RawExchange> {
  const { port } = new URL(baseUrl);
  const socket = net.connect(Number(port), '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let received = '';
  let answered = false;
  const answer = new Promise<{ status: number; body: any }>((resolve, reject) => {
    socket.on('data', (data) => {
      received += data.toString('latin1');
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(received.slice(0, end))?.[1] ?? -1);
      if (length >= 0 && received.length >= end + 4 + length) {
        answered = true;
        resolve({ status: Number(received.slice(9, 12)), body: JSON.parse(received.slice(end + 4, end + 4 + length)) });
      }
    });
    // A write after the server closed fails (EPIPE); what counts is whether the answer came first.
    socket.on('error', () => undefined);
    socket.on('close', () => (answered ? undefined : reject(new Error(`closed without an answer: ${received.slice(0, 200)}`))));
  });
  const settled = answer.then(
    () => undefined,
    () => undefined,
  );
  socket.write(head);
  const chunkBytes = options.chunkBytes ?? 64 * 1024;
  let sent = 0;
  let sentBeforeAnswer = -1;
  for (let offset = 0; offset < body.length && !answered; offset += chunkBytes) {
    const chunk = body.subarray(offset, offset + chunkBytes);
    const framed = options.chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
    if (!socket.write(framed)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), settled]);
    sent += chunk.length;
    // Pace the writes so an answer is read before the next write (a write to a socket the server has
    // closed makes its kernel reset the connection, and the reset discards an answer not read yet).
    await new Promise((resolve) => setTimeout(resolve, 2));
    if (answered) sentBeforeAnswer = sent;
  }
  if (!answered && options.chunked) socket.write('0\r\n\r\n');
  const result = await Promise.race([answer, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer within 60 s')), 60_000).unref())]);
  if (sentBeforeAnswer < 0) sentBeforeAnswer = answered ? sent : body.length;
  socket.destroy();
  return { ...result, sentBeforeAnswer };
}

const deepBody = () => Buffer.from('['.repeat(DEEP_LEVELS) + ']'.repeat(DEEP_LEVELS));

describe('request bodies before and after authentication', () => {
  let server: TestServer;
  let apiKey: string;

  before(async () => {
    server = await startTestServer({ config: { unauthenticatedBodyLimitBytes: ANONYMOUS_LIMIT } });
    ({ apiKey } = await server.createUserWithKey('bodies'));
  });
  after(() => server.close());

  test('no credentials: 401 arrives while the client is still sending its 9.8 MB body, and /healthz answers meanwhile', async () => {
    const body = deepBody();
    const head = `POST /v1/api-keys/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const exchange = sendSlowly(server.baseUrl, head, body);
    const health = await call(server, 'GET', '/healthz');
    assert.equal(health.status, 200);
    const { status, body: answer, sentBeforeAnswer } = await exchange;
    assert.equal(status, 401);
    assert.equal(answer.code, 'NOT_AUTHENTICATED');
    assert.ok(sentBeforeAnswer < body.length / 2, `answered after ${sentBeforeAnswer} of ${body.length} bytes`);
  });

  test('no credentials where the body may carry the key: only the anonymous limit is read, then 413 saying to use a header', async () => {
    const body = deepBody();
    const head = 'POST /v1/sessions/session HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
    const { status, body: answer, sentBeforeAnswer } = await sendSlowly(server.baseUrl, head, body, { chunked: true });
    assert.equal(status, 413);
    assert.equal(answer.code, 'PAYLOAD_TOO_LARGE');
    assert.match(answer.detail, /header/);
    assert.ok(sentBeforeAnswer < body.length / 2, `answered after ${sentBeforeAnswer} of ${body.length} bytes`);

    const declared = await call(server, 'POST', '/execute', { body: 'x'.repeat(ANONYMOUS_LIMIT + 1), headers: { 'content-type': 'application/json' } });
    assert.equal(declared.status, 413, 'a declared length over the limit is refused before reading');
  });

  test('a 9.8 MB body nested 4.9 M levels deep, with valid credentials, is refused as json_invalid without being parsed', async () => {
    const rssBefore = process.resourceUsage().maxRSS;
    const res = await call(server, 'POST', '/v1/api-keys/', { apiKey, body: deepBody().toString(), headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 422, res.text.slice(0, 300));
    assert.equal(res.body.detail[0].type, 'json_invalid');
    assert.match(res.body.detail[0].msg, /nested more than 64 levels/);
    // The server runs in this process: parsing the document took 1.8 GB; the text itself is ~20 MB twice.
    const grownMib = (process.resourceUsage().maxRSS - rssBefore) / 1024;
    assert.ok(grownMib < 400, `peak memory grew by ${grownMib.toFixed(0)} MiB`);
  });

  test('a body of more than 10,000 values is refused before parsing; ordinary bodies are untouched', async () => {
    const wide = await call(server, 'PATCH', '/v1/api-keys/1', { apiKey, body: `[${'1,'.repeat(20_000)}1]`, headers: { 'content-type': 'application/json' } });
    assert.equal(wide.status, 422);
    assert.match(wide.body.detail[0].msg, /more than 10000 values/);
    const nested = await call(server, 'POST', '/v1/api-keys/', { apiKey, json: { description: '[[[[{"not": "nesting"}]]]]' } });
    assert.equal(nested.status, 200, 'brackets inside strings are text');
  });

  test('the operations anyone may call (sign-in, command-line login) read at most 64 KiB', async () => {
    const res = await call(server, 'POST', '/v1/auth/token', { form: { username: 'bodies', password: 'x'.repeat(100 * 1024) } });
    assert.equal(res.status, 413);
    assert.equal(res.body.code, 'PAYLOAD_TOO_LARGE');
  });

  test('the api_key body field authenticates only the operations whose body has one', async () => {
    const created = await call(server, 'POST', '/v1/sessions/session', { json: { api_key: apiKey, vcpu_count: 1 } });
    assert.equal(created.status, 200, created.text);
    const notHere = await call(server, 'POST', '/v1/api-keys/', { json: { api_key: apiKey } });
    assert.equal(notHere.status, 401);
    assert.equal(notHere.body.code, 'NOT_AUTHENTICATED');
  });

  test('upload: anonymous parts are read up to the limit; an api_key field sent first authenticates the rest', async () => {
    const big = new Blob([Buffer.alloc(ANONYMOUS_LIMIT * 4, 7)]);
    const fileFirst = new FormData();
    fileFirst.append('file', big, 'big.bin');
    fileFirst.append('api_key', apiKey);
    const refused = await fetch(`${server.baseUrl}/upload`, { method: 'POST', body: fileFirst });
    assert.equal(refused.status, 413);

    const keyFirst = new FormData();
    keyFirst.append('api_key', apiKey);
    keyFirst.append('session_id', '00000000-0000-4000-8000-000000000000');
    keyFirst.append('remote_path', '/tmp/big.bin');
    keyFirst.append('file', big, 'big.bin');
    const accepted = await fetch(`${server.baseUrl}/upload`, { method: 'POST', body: keyFirst });
    assert.equal(accepted.status, 404, 'authenticated, then refused for the unknown session');
  });
});
