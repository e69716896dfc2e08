/**
 * Files through HTTP against real VMs: uploads and downloads byte-exact (plain files, tar archives, raw streams,
 * limits), the verbs on paths (stat, exists, mkdir, remove, rename) with their error cases, and directory watches.
 */
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

  describe('verbs on paths', () => {
    const files = (suffix = '') => `/v1/sessions/${sessionId}/files${suffix}`;
    const bash = async (command: string) =>
      (await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command } })).body;

    test('stat describes a file, a directory and a symlink (not followed); a missing path is 404', async () => {
      await bash('mkdir -p /tmp/verbs && printf 12345 > /tmp/verbs/five.txt && chmod 640 /tmp/verbs/five.txt && ln -sfn five.txt /tmp/verbs/link');
      const file = await call(server, 'GET', files('/stat?path=/tmp/verbs/five.txt'), { apiKey });
      assert.equal(file.status, 200, file.text);
      assert.deepEqual(
        {
          name: file.body.name,
          path: file.body.path,
          type: file.body.type,
          size: file.body.size,
          mode: file.body.mode,
          symlink_target: file.body.symlink_target,
        },
        { name: 'five.txt', path: '/tmp/verbs/five.txt', type: 'file', size: 5, mode: 0o640, symlink_target: null },
      );
      assert.ok(Math.abs(Date.parse(file.body.modified_at) - Date.now()) < 10 * 60_000, file.body.modified_at);
      const dir = await call(server, 'GET', files('/stat?path=/tmp/verbs'), { apiKey });
      assert.equal(dir.body.type, 'directory');
      const link = await call(server, 'GET', files('/stat?path=/tmp/verbs/link'), { apiKey });
      assert.deepEqual([link.body.type, link.body.symlink_target], ['symlink', 'five.txt']);
      const relative = await call(server, 'GET', files('/stat?path=.'), { apiKey });
      assert.deepEqual([relative.body.path, relative.body.type], ['/root', 'directory']);
      const missing = await call(server, 'GET', files('/stat?path=/tmp/verbs/none'), { apiKey });
      assert.deepEqual([missing.status, missing.body.code], [404, 'NOT_FOUND']);
    });

    test('list with depth: each directory followed by its contents, symlinks not followed, a limit that says it cut', async () => {
      await bash(
        'rm -rf /tmp/tree && mkdir -p /tmp/tree/a/b/c /tmp/tree/z && touch /tmp/tree/a/one /tmp/tree/a/b/two /tmp/tree/a/b/c/three && ln -s /etc /tmp/tree/etc-link',
      );
      const paths = async (query: string) => {
        const answer = await call(server, 'GET', files(`?path=/tmp/tree${query}`), { apiKey });
        assert.equal(answer.status, 200, answer.text);
        return { paths: answer.body.entries.map((e: { path: string }) => e.path.replace('/tmp/tree/', '')), truncated: answer.body.truncated };
      };
      assert.deepEqual(await paths(''), { paths: ['a', 'etc-link', 'z'], truncated: false });
      assert.deepEqual(await paths('&depth=2'), { paths: ['a', 'a/b', 'a/one', 'etc-link', 'z'], truncated: false });
      assert.deepEqual(await paths('&depth=16'), { paths: ['a', 'a/b', 'a/b/c', 'a/b/c/three', 'a/b/two', 'a/one', 'etc-link', 'z'], truncated: false });
      assert.deepEqual(await paths('&depth=16&limit=3'), { paths: ['a', 'a/b', 'a/b/c'], truncated: true });
      assert.equal((await call(server, 'GET', files('?path=/tmp/tree&depth=17'), { apiKey })).status, 422);
    });

    test('exists: true for a file, a directory and a dangling symlink, false for nothing', async () => {
      await bash('mkdir -p /tmp/verbs && ln -sfn /nowhere /tmp/verbs/dangling');
      for (const [path, expected] of [
        ['/tmp/verbs/five.txt', true],
        ['/tmp/verbs', true],
        ['/tmp/verbs/dangling', true],
        ['/tmp/verbs/none', false],
      ] as const) {
        const answer = await call(server, 'GET', files(`/exists?path=${encodeURIComponent(path)}`), { apiKey });
        assert.equal(answer.status, 200, answer.text);
        assert.deepEqual(answer.body, { path, exists: expected });
      }
    });

    test('mkdir makes parents by default, says whether it created, and refuses a file in the way or (without parents) a missing parent', async () => {
      const made = await call(server, 'POST', files('/mkdir'), { apiKey, json: { path: '/tmp/verbs/a/b/c' } });
      assert.deepEqual([made.status, made.body], [200, { path: '/tmp/verbs/a/b/c', created: true }]);
      assert.equal((await bash('test -d /tmp/verbs/a/b/c && echo dir')).stdout, 'dir\n');
      const again = await call(server, 'POST', files('/mkdir'), { apiKey, json: { path: '/tmp/verbs/a/b/c' } });
      assert.deepEqual(again.body, { path: '/tmp/verbs/a/b/c', created: false });
      const onFile = await call(server, 'POST', files('/mkdir'), { apiKey, json: { path: '/tmp/verbs/five.txt' } });
      assert.deepEqual([onFile.status, onFile.body.code], [409, 'CONFLICT']);
      const noParent = await call(server, 'POST', files('/mkdir'), { apiKey, json: { path: '/tmp/verbs/x/y', parents: false } });
      assert.deepEqual([noParent.status, noParent.body.code], [404, 'NOT_FOUND']);
      const badPath = await call(server, 'POST', files('/mkdir'), { apiKey, json: { path: '' } });
      assert.equal(badPath.status, 422, badPath.text);
    });

    test('remove: a file, an empty directory, a tree only with recursive; nothing there is removed=false; / is refused', async () => {
      await bash('mkdir -p /tmp/gone/sub && echo x > /tmp/gone/sub/f && echo y > /tmp/gone-file && mkdir -p /tmp/gone-empty');
      const file = await call(server, 'DELETE', files('?path=/tmp/gone-file'), { apiKey });
      assert.deepEqual([file.status, file.body], [200, { path: '/tmp/gone-file', removed: true }]);
      const empty = await call(server, 'DELETE', files('?path=/tmp/gone-empty'), { apiKey });
      assert.equal(empty.body.removed, true);
      const tree = await call(server, 'DELETE', files('?path=/tmp/gone'), { apiKey });
      assert.deepEqual([tree.status, tree.body.code], [409, 'CONFLICT']);
      assert.equal((await bash('cat /tmp/gone/sub/f')).stdout, 'x\n', 'a refused remove removes nothing');
      const recursive = await call(server, 'DELETE', files('?path=/tmp/gone&recursive=true'), { apiKey });
      assert.deepEqual(recursive.body, { path: '/tmp/gone', removed: true });
      assert.equal((await bash('ls -d /tmp/gone /tmp/gone-file /tmp/gone-empty 2>/dev/null | wc -l')).stdout, '0\n');
      const nothing = await call(server, 'DELETE', files('?path=/tmp/gone'), { apiKey });
      assert.deepEqual([nothing.status, nothing.body.removed], [200, false]);
      const root = await call(server, 'DELETE', files('?path=/&recursive=true'), { apiKey });
      assert.deepEqual([root.status, root.body.code], [400, 'BAD_REQUEST']);
    });

    test('rename moves a file and a directory, refuses to overwrite unless told, and to move a directory into itself', async () => {
      await bash('rm -rf /tmp/mv && mkdir -p /tmp/mv/dir/inner && echo one > /tmp/mv/one && echo two > /tmp/mv/two && echo deep > /tmp/mv/dir/inner/f');
      const moved = await call(server, 'POST', files('/rename'), { apiKey, json: { from: '/tmp/mv/one', to: '/tmp/mv/uno' } });
      assert.equal(moved.status, 200, moved.text);
      assert.deepEqual([moved.body.path, moved.body.type, moved.body.size], ['/tmp/mv/uno', 'file', 4]);
      const taken = await call(server, 'POST', files('/rename'), { apiKey, json: { from: '/tmp/mv/uno', to: '/tmp/mv/two' } });
      assert.deepEqual([taken.status, taken.body.code], [409, 'CONFLICT']);
      assert.equal((await bash('cat /tmp/mv/uno /tmp/mv/two')).stdout, 'one\ntwo\n', 'a refused rename changes nothing');
      const replaced = await call(server, 'POST', files('/rename'), { apiKey, json: { from: '/tmp/mv/uno', to: '/tmp/mv/two', overwrite: true } });
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal((await bash('cat /tmp/mv/two; test -e /tmp/mv/uno || echo gone')).stdout, 'one\ngone\n');
      const dir = await call(server, 'POST', files('/rename'), { apiKey, json: { from: '/tmp/mv/dir', to: '/root/moved-dir' } });
      assert.deepEqual([dir.status, dir.body.type], [200, 'directory']);
      assert.equal((await bash('cat /root/moved-dir/inner/f')).stdout, 'deep\n');
      const intoItself = await call(server, 'POST', files('/rename'), { apiKey, json: { from: '/root/moved-dir', to: '/root/moved-dir/inner/again' } });
      assert.deepEqual([intoItself.status, intoItself.body.code], [400, 'BAD_REQUEST']);
      const missing = await call(server, 'POST', files('/rename'), { apiKey, json: { from: '/tmp/mv/none', to: '/tmp/mv/other' } });
      assert.deepEqual([missing.status, missing.body.code], [404, 'NOT_FOUND']);
      const noDir = await call(server, 'POST', files('/rename'), { apiKey, json: { from: '/tmp/mv/two', to: '/tmp/no/such/dir/two' } });
      assert.deepEqual([noDir.status, noDir.body.code], [404, 'NOT_FOUND'], noDir.text);
      assert.equal((await bash('cat /tmp/mv/two')).stdout, 'one\n', 'a failed move leaves the file where it was');
    });

    test("another user's session is 404 on every verb, and nothing happens in the VM", async () => {
      const { apiKey: other } = await server.createUserWithKey('not-the-filer', 'pro');
      await bash('echo keep > /tmp/keep');
      const answers = await Promise.all([
        call(server, 'GET', files('/stat?path=/tmp/keep'), { apiKey: other }),
        call(server, 'GET', files('/exists?path=/tmp/keep'), { apiKey: other }),
        call(server, 'POST', files('/mkdir'), { apiKey: other, json: { path: '/tmp/intruder' } }),
        call(server, 'DELETE', files('?path=/tmp/keep'), { apiKey: other }),
        call(server, 'POST', files('/rename'), { apiKey: other, json: { from: '/tmp/keep', to: '/tmp/taken' } }),
      ]);
      assert.deepEqual(
        answers.map((a) => a.status),
        [404, 404, 404, 404, 404],
      );
      assert.equal((await bash('cat /tmp/keep; test -e /tmp/intruder || echo no-intruder')).stdout, 'keep\nno-intruder\n');
    });
    /** Opens a watch; `next(predicate)` waits for the first event (after those already taken) that matches. */
    const openWatch = async (query: string, key = apiKey) => {
      const controller = new AbortController();
      const response = await fetch(`${server.baseUrl}${files(`/watch?${query}`)}`, {
        headers: { 'x-api-key': key, accept: 'application/x-ndjson' },
        signal: controller.signal,
      });
      const events: any[] = [];
      let wake: () => void = () => undefined;
      let done = false;
      const reading = (async () => {
        if (!response.ok || !response.body) return;
        let buffer = '';
        try {
          for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
            buffer += Buffer.from(chunk).toString();
            let newline: number;
            while ((newline = buffer.indexOf('\n')) >= 0) {
              const line = buffer.slice(0, newline).trim();
              buffer = buffer.slice(newline + 1);
              if (line) events.push(JSON.parse(line));
              wake();
            }
          }
        } catch {
          // aborted by close()
        } finally {
          done = true;
          wake();
        }
      })();
      let taken = 0;
      const next = async (what: string, predicate: (event: any) => boolean, timeoutMs = 30_000) => {
        const deadline = Date.now() + timeoutMs;
        for (;;) {
          const at = events.findIndex((event, index) => index >= taken && predicate(event));
          if (at >= 0) {
            taken = at + 1;
            return events[at];
          }
          if (done || Date.now() > deadline) assert.fail(`no ${what} event; the watch said ${JSON.stringify(events)}`);
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, 250);
          });
        }
      };
      const close = async () => {
        controller.abort();
        await reading;
      };
      return { response, events, next, close };
    };

    test('a watch reports create, write, rename, chmod and remove under a directory; recursive follows new directories', async () => {
      await bash('rm -rf /tmp/watched && mkdir -p /tmp/watched/old-sub');
      const flat = await openWatch('path=/tmp/watched');
      assert.equal(flat.response.status, 200);
      assert.match(flat.response.headers.get('content-type') ?? '', /application\/x-ndjson/);
      assert.deepEqual(await flat.next('start', (e) => e.type === 'start'), { type: 'start', path: '/tmp/watched', recursive: false });
      await bash('echo one > /tmp/watched/a.txt');
      await flat.next('create', (e) => e.type === 'create' && e.path === '/tmp/watched/a.txt' && e.is_dir === false);
      await flat.next('write', (e) => e.type === 'write' && e.path === '/tmp/watched/a.txt');
      await bash('mv /tmp/watched/a.txt /tmp/watched/b.txt && chmod 600 /tmp/watched/b.txt && rm /tmp/watched/b.txt');
      await flat.next('rename', (e) => e.type === 'rename' && e.path === '/tmp/watched/a.txt');
      await flat.next('create (the new name)', (e) => e.type === 'create' && e.path === '/tmp/watched/b.txt');
      await flat.next('chmod', (e) => e.type === 'chmod' && e.path === '/tmp/watched/b.txt');
      await flat.next('remove', (e) => e.type === 'remove' && e.path === '/tmp/watched/b.txt');
      // Not recursive: a change inside a subdirectory is not reported.
      await bash('echo deep > /tmp/watched/old-sub/deep.txt && echo marker > /tmp/watched/marker.txt');
      await flat.next('create of the marker', (e) => e.type === 'create' && e.path === '/tmp/watched/marker.txt');
      assert.ok(!flat.events.some((e) => e.path === '/tmp/watched/old-sub/deep.txt'), 'nothing from a subdirectory');
      await flat.close();

      const deep = await openWatch('path=/tmp/watched&recursive=true', apiKey);
      assert.equal((await deep.next('start', (e) => e.type === 'start')).recursive, true);
      await bash('echo again >> /tmp/watched/old-sub/deep.txt');
      await deep.next('write in an existing subdirectory', (e) => e.type === 'write' && e.path === '/tmp/watched/old-sub/deep.txt');
      await bash('mkdir -p /tmp/watched/new/inner && echo x > /tmp/watched/new/inner/file.txt');
      await deep.next('create of a new directory', (e) => e.type === 'create' && e.path === '/tmp/watched/new' && e.is_dir === true);
      await deep.next('create in it', (e) => e.type === 'create' && e.path === '/tmp/watched/new/inner/file.txt');
      await bash('echo later > /tmp/watched/new/inner/later.txt');
      await deep.next('create in a directory made after the watch began', (e) => e.type === 'create' && e.path === '/tmp/watched/new/inner/later.txt');
      // The directory itself goes: the watch says so and ends.
      await bash('rm -rf /tmp/watched');
      await deep.next('end', (e) => e.type === 'end' && e.path === '/tmp/watched');
      await deep.close();
      // Nothing is left watching in the VM once the streams are gone.
      const deadline = Date.now() + 15_000;
      let left = '';
      do {
        left = (await bash('pgrep -fc "inotify_[i]nit1" || true')).stdout.trim();
        if (left === '0') break;
        await new Promise((resolve) => setTimeout(resolve, 250));
      } while (Date.now() < deadline);
      assert.equal(left, '0', 'no watcher process is left in the VM');
    });

    test("a watch of nothing is 404, of a file 409; another user's session 404", async () => {
      await bash('echo f > /tmp/plain-file');
      const missing = await call(server, 'GET', files('/watch?path=/tmp/no-such-dir'), { apiKey });
      assert.equal(missing.status, 404, missing.text);
      const file = await call(server, 'GET', files('/watch?path=/tmp/plain-file'), { apiKey });
      assert.equal(file.status, 409, file.text);
      const { apiKey: other } = await server.createUserWithKey('not-the-watcher', 'pro');
      const foreign = await call(server, 'GET', files('/watch?path=/tmp'), { apiKey: other });
      assert.equal(foreign.status, 404, foreign.text);
    });
  });
});
