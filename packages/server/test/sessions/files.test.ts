/** Uploads and downloads, byte-exact, through HTTP against real VMs: plain files, tar archives, raw streams, limits. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');

describe('files in and out of a VM', () => {
  let server: TestServer;
  let apiKey: string;
  let sessionId: string;

  before(async () => {
    server = await startTestServer({ config: { uploadLimitBytes: 32 * 1024 * 1024 } });
    ({ apiKey } = await server.createUserWithKey('filer', 'pro'));
    sessionId = (await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1 } })).body.session_id;
  });
  after(() => server.close());

  const upload = async (fields: Record<string, string>, file: Buffer, filename = 'data.bin', fileFirst = false) => {
    const form = new FormData();
    const blob = new Blob([file]);
    if (fileFirst) form.append('file', blob, filename);
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    if (!fileFirst) form.append('file', blob, filename);
    const res = await fetch(`${server.baseUrl}/v1/upload`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form });
    return { status: res.status, body: (await res.json()) as any };
  };

  test('a binary file round-trips byte-exact (JSON base64 download)', async () => {
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const up = await upload({ session_id: sessionId, remote_path: '/tmp/data.bin' }, data);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.equal(up.body.size, data.length);
    assert.equal(up.body.path, '/tmp/data.bin');
    const down = await call(server, 'POST', '/download', { apiKey, json: { session_id: sessionId, filename: '/tmp/data.bin' } });
    assert.equal(down.status, 200);
    assert.equal(down.body.size, data.length);
    assert.equal(down.body.filename, 'data.bin');
    assert.equal(sha(Buffer.from(down.body.content, 'base64')), sha(data));
    const inGuest = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command: 'sha256sum /tmp/data.bin' } });
    assert.equal(inGuest.body.stdout.split(' ')[0], sha(data));
  });

  test('the file part may come before the other fields; relative paths land in /root; form-encoded download works', async () => {
    const data = Buffer.from('hello, relative world\n');
    const up = await upload({ session_id: sessionId, remote_path: 'notes/hello.txt' }, data, 'hello.txt', true);
    assert.equal(up.status, 200, JSON.stringify(up.body));
    assert.equal(up.body.path, '/root/notes/hello.txt');
    const down = await call(server, 'POST', '/download', { apiKey, form: { session_id: sessionId, filename: 'notes/hello.txt' } });
    assert.equal(Buffer.from(down.body.content, 'base64').toString(), data.toString());
  });

  test('Accept: application/octet-stream streams the raw bytes', async () => {
    const res = await fetch(`${server.baseUrl}/download`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json', accept: 'application/octet-stream' },
      body: JSON.stringify({ session_id: sessionId, filename: '/tmp/data.bin' }),
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/octet-stream');
    const bytes = Buffer.from(await res.arrayBuffer());
    assert.equal(bytes.length, Number(res.headers.get('content-length')));
  });

  test('recursive=true unpacks a tar archive at remote_path', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-tar-'));
    try {
      fs.mkdirSync(path.join(dir, 'src', 'pkg'), { recursive: true });
      fs.writeFileSync(path.join(dir, 'src', 'main.py'), 'print("main")\n');
      fs.writeFileSync(path.join(dir, 'src', 'pkg', 'util.py'), 'X = 7\n');
      const archive = execFileSync('tar', ['-C', dir, '-czf', '-', 'src']);
      const up = await upload({ session_id: sessionId, remote_path: '/opt/project', recursive: 'true' }, archive, 'project.tar.gz');
      assert.equal(up.status, 200, JSON.stringify(up.body));
      const listing = await call(server, 'POST', '/execute', {
        apiKey,
        json: { session_id: sessionId, language: 'bash', command: 'cd /opt/project && find . -type f | sort && python3 src/main.py' },
      });
      assert.equal(listing.body.stdout, './src/main.py\n./src/pkg/util.py\nmain\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a file over the upload limit answers 413', async () => {
    const up = await upload({ session_id: sessionId, remote_path: '/tmp/big.bin' }, Buffer.alloc(33 * 1024 * 1024));
    assert.equal(up.status, 413, JSON.stringify(up.body));
    assert.equal(up.body.code, 'PAYLOAD_TOO_LARGE');
  });

  test('missing fields are 422; a missing guest file is 404', async () => {
    const noSession = await upload({ remote_path: '/tmp/x' }, Buffer.from('x'));
    assert.equal(noSession.status, 422);
    assert.deepEqual(noSession.body.detail[0].loc, ['body', 'session_id']);
    const missing = await call(server, 'POST', '/download', { apiKey, json: { session_id: sessionId, filename: '/no/such/file' } });
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
  });
});
