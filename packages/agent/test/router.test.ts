/** The router's per-route deadline: a handler that never finishes is answered DEADLINE_EXCEEDED, the others are not held up. */
import assert from 'node:assert/strict';
import { connect, createServer, type ClientHttp2Session, type Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { replyJson } from '../src/http/reply.ts';
import { Router } from '../src/http/router.ts';

function get(client: ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const stream = client.request({ ':method': 'GET', ':path': path });
    let status = 0;
    let body = '';
    stream.on('response', (headers) => (status = Number(headers[':status'])));
    stream.on('data', (chunk: Buffer) => (body += chunk.toString()));
    stream.on('end', () => resolve({ status, body }));
    stream.on('error', reject);
    stream.end();
  });
}

describe('router deadlines', () => {
  let server: Http2Server;
  let client: ClientHttp2Session;
  let release: () => void = () => undefined;
  const stuck = new Promise<void>((resolve) => (release = resolve));

  before(async () => {
    const router = new Router()
      .add(
        'GET',
        '/stuck',
        async ({ stream }) => {
          await stuck;
          replyJson(stream, 200, { late: true });
        },
        200,
      )
      .add('GET', '/quick', ({ stream }) => replyJson(stream, 200, { ok: true }), 200);
    server = createServer();
    server.on('stream', (stream, headers) => void router.dispatch(stream, headers));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    client = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(async () => {
    release();
    client.close();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers a stuck operation with DEADLINE_EXCEEDED while others are served, and ignores its late answer', async () => {
    const answers = await Promise.all([get(client, '/stuck'), get(client, '/stuck'), get(client, '/quick')]);
    assert.equal(answers[2].status, 200);
    for (const answer of answers.slice(0, 2)) {
      assert.equal(answer.status, 504);
      const body = JSON.parse(answer.body) as { code: string; message: string };
      assert.equal(body.code, 'DEADLINE_EXCEEDED');
      assert.match(body.message, /GET \/stuck did not answer within 0.2 s/);
    }
    release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await get(client, '/quick')).status, 200, 'the session survived the late answers');
  });
});
