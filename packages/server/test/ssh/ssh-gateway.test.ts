/**
 * The SSH gateway with Debian's own OpenSSH client against a real VM: a command with its exit status, a terminal,
 * scp and sftp byte-exact both ways, `-L` forwarding to a server in the guest, and refusals (another user's key,
 * an unregistered key, a password). Plus the key routes: fingerprints as ssh-keygen prints them, duplicates,
 * bad keys, another user's key.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { makeHome, runCli } from '../../../cli/test/run-cli.ts';
import { freePort } from '../helpers/ports.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const GUEST_PORT = 8765;

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
  /** Milliseconds from spawn to the first byte of stdout (null: none). */
  firstOutputMs: number | null;
  durationMs: number;
}

/** Runs an OpenSSH program to completion, with `input` as its stdin. */
function run(program: string, args: string[], input?: string, timeoutMs = 240_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(program, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    let firstOutputMs: number | null = null;
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      firstOutputMs ??= Date.now() - started;
      out.push(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr, firstOutputMs, durationMs: Date.now() - started });
    });
    child.stdin.end(input ?? '');
  });
}

describe('SSH gateway', () => {
  let server: TestServer;
  let dir: string;
  let port: number;
  let alice: { apiKey: string; userId: number };
  let bob: { apiKey: string; userId: number };
  let sessionId: string;
  let vmId: string;
  const key = (name: string) => path.join(dir, name);
  /** Options every client run gets: no config, no known hosts, only the key given, never a prompt. */
  const common = (identity: string) => [
    '-F',
    '/dev/null',
    '-o',
    'StrictHostKeyChecking=no',
    '-o',
    'UserKnownHostsFile=/dev/null',
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'BatchMode=yes',
    '-o',
    'LogLevel=ERROR',
    '-i',
    key(identity),
  ];
  const ssh = (identity: string, user: string, args: string[], input?: string) =>
    run('ssh', [...common(identity), '-p', String(port), ...args, `${user}@127.0.0.1`], input);
  const sshCommand = (identity: string, user: string, command: string, extra: string[] = [], input?: string) =>
    run('ssh', [...common(identity), '-p', String(port), ...extra, `${user}@127.0.0.1`, command], input);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-ssh-test-'));
    for (const name of ['alice', 'bob', 'stranger', 'spare'])
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', `${name}@test`, '-f', key(name)]);
    execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '1024', '-N', '', '-f', key('weak-rsa')]);
    execFileSync('ssh-keygen', ['-q', '-t', 'rsa', '-b', '3072', '-N', '', '-C', 'rsa@test', '-f', key('rsa')]);
    server = await startTestServer();
    assert.ok(server.sshGateway, 'the gateway listens');
    port = server.sshGateway.port;
    alice = await server.createUserWithKey('ssh-alice', 'pro');
    bob = await server.createUserWithKey('ssh-bob', 'pro');
    for (const [user, name] of [
      [alice, 'alice'],
      [bob, 'bob'],
    ] as const) {
      const created = await call(server, 'POST', '/v1/ssh-keys', { apiKey: user.apiKey, json: { public_key: fs.readFileSync(`${key(name)}.pub`, 'utf8') } });
      assert.equal(created.status, 201, created.text);
    }
    const session = await call(server, 'POST', '/v1/sessions/session', { apiKey: alice.apiKey, json: { vcpu_count: 1, vm_lifetime_seconds: 1800 } });
    sessionId = session.body.session_id;
    const started = await call(server, 'POST', '/execute', { apiKey: alice.apiKey, json: { session_id: sessionId, language: 'bash', command: 'echo up' } });
    assert.equal(started.status, 200, started.text);
    vmId = (await call(server, 'GET', `/v1/sessions/status/${sessionId}`, { apiKey: alice.apiKey })).body.vm_id;
    assert.match(vmId, /^vm-/);
  });
  after(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('key routes: fingerprint as ssh-keygen prints it, 409 duplicate, 422 bad keys, 404 for another user, delete', async () => {
    const publicKey = fs.readFileSync(`${key('rsa')}.pub`, 'utf8');
    const created = await call(server, 'POST', '/v1/ssh-keys', { apiKey: alice.apiKey, json: { public_key: publicKey, name: 'laptop' } });
    assert.equal(created.status, 201, created.text);
    const expected = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${key('rsa')}.pub`], { encoding: 'utf8' }).split(' ')[1];
    assert.equal(created.body.fingerprint, expected);
    assert.equal(created.body.name, 'laptop');
    assert.equal(created.body.key_type, 'ssh-rsa');
    assert.equal(created.body.public_key, publicKey.split(' ').slice(0, 2).join(' '));
    assert.equal(created.body.last_used_at, null);
    // The comment is the default name.
    const spare = await call(server, 'POST', '/v1/ssh-keys', { apiKey: alice.apiKey, json: { public_key: fs.readFileSync(`${key('spare')}.pub`, 'utf8') } });
    assert.equal(spare.body.name, 'spare@test');

    const duplicate = await call(server, 'POST', '/v1/ssh-keys', { apiKey: alice.apiKey, json: { public_key: publicKey } });
    assert.equal(duplicate.status, 409);
    assert.equal(duplicate.body.code, 'CONFLICT');
    for (const bad of ['not a key', fs.readFileSync(`${key('weak-rsa')}.pub`, 'utf8'), fs.readFileSync(key('spare'), 'utf8')]) {
      const refused = await call(server, 'POST', '/v1/ssh-keys', { apiKey: alice.apiKey, json: { public_key: bad } });
      assert.equal(refused.status, 422, refused.text);
    }
    const weak = await call(server, 'POST', '/v1/ssh-keys', { apiKey: alice.apiKey, json: { public_key: fs.readFileSync(`${key('weak-rsa')}.pub`, 'utf8') } });
    assert.match(JSON.stringify(weak.body), /1024 bits/);

    const listed = await call(server, 'GET', '/v1/ssh-keys', { apiKey: alice.apiKey });
    const aliceFingerprint = execFileSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${key('alice')}.pub`], { encoding: 'utf8' }).split(' ')[1];
    assert.deepEqual(
      listed.body.map((k: { fingerprint: string }) => k.fingerprint),
      [aliceFingerprint, created.body.fingerprint, spare.body.fingerprint],
    );
    assert.equal((await call(server, 'GET', '/v1/ssh-keys', { apiKey: bob.apiKey })).body.length, 1);
    assert.equal((await call(server, 'GET', `/v1/ssh-keys/${created.body.id}`, { apiKey: alice.apiKey })).body.id, created.body.id);
    assert.equal((await call(server, 'GET', `/v1/ssh-keys/${created.body.id}`, { apiKey: bob.apiKey })).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/ssh-keys/${created.body.id}`, { apiKey: bob.apiKey })).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/ssh-keys/${created.body.id}`, { apiKey: alice.apiKey })).status, 204);
    assert.equal((await call(server, 'GET', `/v1/ssh-keys/${created.body.id}`, { apiKey: alice.apiKey })).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/ssh-keys/${spare.body.id}`, { apiKey: alice.apiKey })).status, 204);

    const info = await call(server, 'GET', '/v1/ssh/info', { apiKey: alice.apiKey });
    assert.deepEqual([info.body.enabled, info.body.port, info.body.host], [true, port, '127.0.0.1']);
    assert.match(info.body.host_key_fingerprint, /^SHA256:[A-Za-z0-9+/]{43}$/);
  });

  test('a command runs in the VM with its output streams and its exit status', async (t) => {
    const result = await sshCommand('alice', vmId, 'echo "on $(hostname)"; echo oops >&2; exit 3');
    t.diagnostic(`login to first output: ${result.firstOutputMs} ms (whole command ${result.durationMs} ms)`);
    assert.equal(result.code, 3, result.stderr);
    assert.equal(result.stdout.toString(), `on ${vmId}\n`);
    assert.equal(result.stderr, 'oops\n');
    // Standard input reaches the command.
    const piped = await sshCommand('alice', vmId, 'tr a-z A-Z', [], 'hello through stdin\n');
    assert.equal(piped.stdout.toString(), 'HELLO THROUGH STDIN\n');
    // By session id: the session's current VM.
    const bySession = await sshCommand('alice', sessionId, 'hostname');
    assert.equal(bySession.code, 0, bySession.stderr);
    assert.equal(bySession.stdout.toString().trim(), vmId);
    const audit = await call(server, 'GET', '/v1/audit/events', { apiKey: alice.apiKey });
    assert.ok(JSON.stringify(audit.body).includes('ssh.login'), 'logins are in the audit log');
  });

  test('a terminal: a login shell on a PTY, with its exit status', async () => {
    const result = await ssh('alice', vmId, ['-tt'], 'tty; echo "answer=$((6*7)) cols=$(tput cols)"; exit 5\n');
    const text = result.stdout.toString();
    assert.equal(result.code, 5, result.stderr + text);
    assert.match(text, /\/dev\/pts\/\d+/);
    assert.match(text, /answer=42 cols=\d+/);
  });

  test('scp copies a binary file up and down byte-exact', async (t) => {
    const data = randomBytes(1024 * 1024 + 123);
    fs.writeFileSync(path.join(dir, 'up.bin'), data);
    const up = await run('scp', [...common('alice'), '-P', String(port), path.join(dir, 'up.bin'), `${vmId}@127.0.0.1:/tmp/up.bin`]);
    assert.equal(up.code, 0, up.stderr);
    const inGuest = await sshCommand('alice', vmId, 'sha256sum /tmp/up.bin');
    assert.equal(inGuest.stdout.toString().split(' ')[0], sha(data));
    const down = await run('scp', [...common('alice'), '-P', String(port), `${vmId}@127.0.0.1:/tmp/up.bin`, path.join(dir, 'down.bin')]);
    assert.equal(down.code, 0, down.stderr);
    assert.equal(sha(fs.readFileSync(path.join(dir, 'down.bin'))), sha(data));
    const mib = data.length / 2 ** 20;
    t.diagnostic(
      `scp 1 MiB: up ${up.durationMs} ms (${(mib / (up.durationMs / 1000)).toFixed(2)} MiB/s), down ${down.durationMs} ms (${(mib / (down.durationMs / 1000)).toFixed(2)} MiB/s), each with its login`,
    );
  });

  test('sftp in batch mode: mkdir, put, ls, rename, get, rm', async () => {
    const data = randomBytes(200_000);
    fs.writeFileSync(path.join(dir, 'batch.bin'), data);
    const batch = path.join(dir, 'batch.txt');
    fs.writeFileSync(
      batch,
      [
        'mkdir /tmp/sftp-dir',
        'cd /tmp/sftp-dir',
        `put ${path.join(dir, 'batch.bin')} one.bin`,
        'rename one.bin two.bin',
        'ls -l',
        `get two.bin ${path.join(dir, 'batch-back.bin')}`,
        'rm two.bin',
        'ls',
        'rmdir /tmp/sftp-dir',
      ].join('\n') + '\n',
    );
    const result = await run('sftp', [...common('alice'), '-P', String(port), '-b', batch, `${vmId}@127.0.0.1`]);
    assert.equal(result.code, 0, result.stderr + result.stdout.toString());
    assert.match(result.stdout.toString(), new RegExp(`-rw\\S* .* ${data.length} .* two\\.bin`));
    assert.equal(sha(fs.readFileSync(path.join(dir, 'batch-back.bin'))), sha(data));
    const gone = await sshCommand('alice', vmId, 'test -e /tmp/sftp-dir && echo present || echo gone');
    assert.equal(gone.stdout.toString().trim(), 'gone');
  });

  test('-L forwards a local port to a server in the VM', async () => {
    const served = await sshCommand(
      'alice',
      vmId,
      [
        'mkdir -p /srv/fwd && printf forwarded-ok > /srv/fwd/hello.txt',
        `setsid python3 -m http.server ${GUEST_PORT} --bind 127.0.0.1 --directory /srv/fwd >/dev/null 2>&1 < /dev/null &`,
        `for i in $(seq 100); do curl -s -m 1 http://127.0.0.1:${GUEST_PORT}/hello.txt >/dev/null && break; sleep 0.2; done`,
      ].join('\n'),
    );
    assert.equal(served.code, 0, served.stderr);
    const local = await freePort();
    const tunnel = spawn(
      'ssh',
      [...common('alice'), '-p', String(port), '-N', '-o', 'ExitOnForwardFailure=yes', '-L', `${local}:localhost:${GUEST_PORT}`, `${vmId}@127.0.0.1`],
      { stdio: 'ignore' },
    );
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const open = await new Promise<boolean>((resolve) => {
          const socket = net.connect(local, '127.0.0.1', () => (socket.end(), resolve(true)));
          socket.once('error', () => resolve(false));
        });
        if (open) break;
        assert.ok(Date.now() < deadline && tunnel.exitCode === null, 'the forwarded port opens');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const response = await fetch(`http://127.0.0.1:${local}/hello.txt`);
      assert.equal(response.status, 200);
      assert.equal(await response.text(), 'forwarded-ok');
    } finally {
      tunnel.kill();
    }
  });

  test('the CLI adds, lists and removes keys, and prints the ssh command that logs in', async () => {
    const home = makeHome(server.baseUrl);
    try {
      const env = home.env({ SANDBOXD_API_KEY: bob.apiKey });
      const added = await runCli(['--json', 'keys', 'ssh', 'add', `${key('spare')}.pub`, '--name', 'cli key'], env);
      assert.equal(added.code, 0, added.stderr);
      assert.equal(added.json.name, 'cli key');
      const refused = await runCli(['keys', 'ssh', 'add', key('spare')], env);
      assert.notEqual(refused.code, 0, 'a private key file is refused');
      const listed = await runCli(['--json', 'keys', 'ssh', 'ls'], env);
      assert.deepEqual(
        listed.json.map((k: { name: string }) => k.name),
        ['bob@test', 'cli key'],
      );
      const printed = await runCli(['--json', 'ssh', vmId, '--print', '--', 'echo', 'hi'], home.env({ SANDBOXD_API_KEY: alice.apiKey }));
      assert.equal(printed.code, 0, printed.stderr);
      assert.deepEqual(printed.json.argv, ['ssh', '-p', String(port), `${vmId}@127.0.0.1`, 'echo', 'hi']);
      // The printed command logs in (with the test's options for a host key nobody has seen before).
      const [, ...args] = printed.json.argv as string[];
      const ran = await run('ssh', [...common('alice'), ...args]);
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.stdout.toString(), 'hi\n');
      const removed = await runCli(['keys', 'ssh', 'rm', String(added.json.id)], env);
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal((await runCli(['--json', 'keys', 'ssh', 'ls'], env)).json.length, 1);
    } finally {
      home.remove();
    }
  });

  test("refused: another user's key, an unregistered key, a password, an unknown name", async () => {
    for (const [identity, user] of [
      ['bob', vmId],
      ['bob', sessionId],
      ['stranger', vmId],
      ['alice', 'vm-aaaaaaaaaaaaaaaa'],
      ['alice', '00000000-0000-4000-8000-000000000000'],
    ] as const) {
      const result = await sshCommand(identity, user, 'echo should-not-run');
      assert.equal(result.code, 255, `${identity}@${user}: ${result.stderr}`);
      assert.match(result.stderr, /Permission denied \(publickey\)/);
      assert.equal(result.stdout.length, 0);
    }
    const password = await run('ssh', [
      ...common('alice'),
      '-p',
      String(port),
      '-o',
      'PubkeyAuthentication=no',
      '-o',
      'PreferredAuthentications=password,keyboard-interactive',
      `${vmId}@127.0.0.1`,
      'true',
    ]);
    assert.equal(password.code, 255);
    assert.match(password.stderr, /Permission denied \(publickey\)/);
    // Forwarding reaches the VM itself only.
    const elsewhere = await run('ssh', [
      ...common('alice'),
      '-p',
      String(port),
      '-N',
      '-o',
      'ExitOnForwardFailure=yes',
      '-W',
      '10.0.0.1:80',
      `${vmId}@127.0.0.1`,
    ]);
    assert.notEqual(elsewhere.code, 0);
  });
});
