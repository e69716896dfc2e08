/**
 * `sandbox volume` and `sandbox create --volume` as a user runs them (a child process), against the real server
 * and real VMs: create prints the id, create --volume starts a VM with it mounted (the current session), what
 * exec writes there is read by the next VM that mounts it read-only, ls shows who mounts it, rm is refused
 * while it is mounted and deletes it after.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { makeHome, runCli, type CliHome } from './run-cli.ts';

describe('sandbox volume', { timeout: 5 * 60_000 }, () => {
  let server: TestServer;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;
  let apiKey: string;

  before(async () => {
    server = await startTestServer();
    apiKey = (await server.createUserWithKey('vera', 'pro')).apiKey;
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: apiKey });
  });
  after(async () => {
    home?.remove();
    await server?.close();
  });

  test('create, mount read-write then read-only, ls, rm', async () => {
    const created = await runCli(['volume', 'create', 'notes', '--size', '32M'], env);
    assert.equal(created.code, 0, created.stderr);
    const id = created.stdout.trim();
    assert.match(id, /^vol_/);
    assert.equal((await runCli(['create', '--volume', `${id}:data`], env)).code, 2, 'a relative path is a usage error');

    const writer = await runCli(['create', '--vcpus', '1', '--volume', `${id}:/notes`], env);
    assert.equal(writer.code, 0, writer.stderr);
    const wrote = await runCli(['exec', '-l', 'bash', 'echo kept > /notes/a.txt'], env);
    assert.equal(wrote.code, 0, wrote.stderr);
    const listed = await runCli(['volume', 'ls'], env);
    assert.match(listed.stdout, new RegExp(`${id}\\s+notes\\s+32 MiB\\s+vm-[a-z2-7]+:/notes`));
    const refused = await runCli(['volume', 'rm', id], env);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /mounted/);

    const vms = (await call(server, 'GET', '/v1/vms', { apiKey })).body as { vm_id: string; status: string }[];
    for (const vm of vms) if (vm.status === 'active') await call(server, 'DELETE', `/v1/vms/${vm.vm_id}`, { apiKey });
    const reader = await runCli(['create', '--vcpus', '1', '--volume', `${id}:/notes:ro`], env);
    assert.equal(reader.code, 0, reader.stderr);
    const read = await runCli(['exec', '-l', 'bash', 'cat /notes/a.txt'], env);
    assert.equal(read.stdout.trim(), 'kept');
    for (const vm of (await call(server, 'GET', '/v1/vms', { apiKey })).body as { vm_id: string; status: string }[]) {
      if (vm.status === 'active') await call(server, 'DELETE', `/v1/vms/${vm.vm_id}`, { apiKey });
    }
    const removed = await runCli(['volume', 'rm', id], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal((await runCli(['volume', 'ls'], env)).stdout.trim(), 'No volumes.');
  });
});
