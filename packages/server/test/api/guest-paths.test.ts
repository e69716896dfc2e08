/**
 * Paths in the VM are checked at the API (at most 4096 bytes, names of at most 255 bytes, no NUL), so a path
 * the guest could not take never reaches its agent: a 65,536-character upload path once broke the agent
 * link (503) and the next execute ran on a new VM without the session's files and Python state.
 * Needs the VM engine (one VM).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

describe('guest paths', () => {
  let server: TestServer;
  let apiKey: string;
  let sessionId: string;

  before(async () => {
    server = await startTestServer();
    ({ apiKey } = await server.createUserWithKey('paths'));
    sessionId = (await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1 } })).body.session_id;
  });
  after(() => server.close());

  const upload = async (fields: Record<string, string>, filename = 'data.txt') => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    form.append('file', new Blob(['hello']), filename);
    const res = await fetch(`${server.baseUrl}/upload`, { method: 'POST', headers: { 'x-api-key': apiKey }, body: form });
    return { status: res.status, body: (await res.json()) as any };
  };

  test('a 65,536-character remote_path is 422 before it reaches the VM; the session keeps its VM and its Python state', async () => {
    const first = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, code: 'x = 41', timeout: 180 } });
    assert.equal(first.status, 200, first.text);
    const refused = await upload({ session_id: sessionId, remote_path: `/tmp/${'a'.repeat(65_536 - 5)}` });
    assert.equal(refused.status, 422, JSON.stringify(refused.body).slice(0, 300));
    assert.deepEqual(refused.body.detail[0].loc, ['body', 'remote_path']);
    const after = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, code: 'print(x + 1)' } });
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body.stdout, '42\n');
    assert.equal(after.body.vm_id, first.body.vm_id, 'the same VM');
  });

  test('paths the VM could not take are 422 wherever they are given: upload, download, terminal cwd and shell', async () => {
    const longName = `/tmp/${'n'.repeat(256)}`;
    const tooLong = `/${'d/'.repeat(2048)}f`;
    const relativeTooLong = 'r'.repeat(200) + '/r'.repeat(1945); // 4090 bytes given, over 4096 under /root
    for (const bad of [longName, tooLong, relativeTooLong, '/tmp/a\u0000b']) {
      const up = await upload({ session_id: sessionId, remote_path: bad });
      assert.equal(up.status, 422, `upload ${bad.slice(0, 30)}: ${JSON.stringify(up.body).slice(0, 200)}`);
      const down = await call(server, 'POST', '/download', { apiKey, json: { session_id: sessionId, filename: bad } });
      assert.equal(down.status, 422, `download ${bad.slice(0, 30)}: ${down.text.slice(0, 200)}`);
      assert.deepEqual(down.body.detail[0].loc, ['body', 'filename']);
      const pty = await call(server, 'POST', `/v1/sessions/${sessionId}/pty/sessions`, { apiKey, json: { cwd: bad } });
      assert.equal(pty.status, 422, `cwd ${bad.slice(0, 30)}: ${pty.text.slice(0, 200)}`);
      if (!bad.startsWith('/')) continue; // a shell path is absolute
      const shell = await call(server, 'POST', `/v1/sessions/${sessionId}/pty/sessions`, { apiKey, json: { shell: bad } });
      assert.equal(shell.status, 422, `shell ${bad.slice(0, 30)}`);
    }
    const namedByFile = await upload({ session_id: sessionId, remote_path: '/tmp/' }, 'f'.repeat(300));
    assert.equal(namedByFile.status, 422);
    assert.deepEqual(namedByFile.body.detail[0].loc, ['body', 'file']);
    // 200 rather than 255: the agent writes through a temporary file whose name adds ~30 bytes to the target's.
    const ok = await upload({ session_id: sessionId, remote_path: `/tmp/${'n'.repeat(200)}` });
    assert.equal(ok.status, 200, `a long name within the limit is fine: ${JSON.stringify(ok.body)}`);
  });
});
