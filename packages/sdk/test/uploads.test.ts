/**
 * Uploads from Node.js against a local node:http server that keeps what it receives: a file above 4 MiB goes as a
 * multipart body the client streams itself (its length stated, its file part byte-exact, sent again whole when
 * the first attempt is answered 503), a small one as fetch's FormData. The real server's parser takes the streamed
 * form in the walk-through (walkthrough.test.ts) and the 1 GiB bench (bench/files-stream.ts).
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Sandboxd } from '../src/index.ts';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const sha = (data: Uint8Array) => createHash('sha256').update(data).digest('hex');

/** The bytes of the part named `file` of a multipart body. */
function filePart(received: Received): Buffer {
  const boundary = /boundary=(.+)$/.exec(received.headers['content-type'] ?? '')?.[1];
  assert.ok(boundary, `a multipart body: ${received.headers['content-type']}`);
  const start = received.body.indexOf('\r\n\r\n', received.body.indexOf('name="file"')) + 4;
  const end = received.body.lastIndexOf(`\r\n--${boundary}--`);
  return received.body.subarray(start, end);
}

describe('uploads from Node.js', () => {
  let server: http.Server;
  let baseUrl: string;
  let received: Received[] = [];
  let failFirst = false;

  before(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks) });
        if (failFirst && received.length === 1) {
          res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'busy' }));
          return;
        }
        const size = filePart(received.at(-1)!).length;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true, path: '/root/x', size, recursive: false }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('a file above 4 MiB is streamed as a multipart body of stated length; a 503 sends it again whole', async () => {
    received = [];
    failFirst = true;
    const data = randomBytes(6 * 2 ** 20 + 13);
    const client = new Sandboxd({ baseUrl, apiKey: 'sbx_sk_test', retryDelay: 10 });
    const answer = await client.files.upload('s-1', new Blob([data]), '/root/big.bin');
    assert.equal(answer.size, data.length);
    assert.equal(received.length, 2, 'the 503 was retried');
    for (const attempt of received) {
      assert.match(attempt.headers['content-type'] ?? '', /^multipart\/form-data; boundary=----sandboxd[0-9a-f]{24}$/);
      assert.equal(Number(attempt.headers['content-length']), attempt.body.length, 'the length stated is the length sent');
      assert.equal(attempt.headers['x-api-key'], 'sbx_sk_test');
      assert.equal(sha(filePart(attempt)), sha(data), 'the file part is the file, byte for byte');
      const text = attempt.body.toString('latin1');
      assert.ok(text.indexOf('name="session_id"\r\n\r\ns-1\r\n') < text.indexOf('name="file"; filename="big.bin"'), 'fields before the file');
      assert.match(text, /name="remote_path"\r\n\r\n\/root\/big\.bin\r\n/);
    }
    failFirst = false;
  });

  test('a small file goes as a FormData, as fetch sends it', async () => {
    received = [];
    const client = new Sandboxd({ baseUrl, apiKey: 'sbx_sk_test' });
    await client.files.upload('s-1', 'hello\n', 'notes/hello.txt');
    assert.equal(received.length, 1);
    assert.doesNotMatch(received[0]!.headers['content-type'] ?? '', /----sandboxd/);
    assert.equal(filePart(received[0]!).toString(), 'hello\n');
  });
});
