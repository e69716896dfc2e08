import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAgentOptions, readEnvFile } from '../src/options.ts';
import { readVmIdFromCmdline } from '../src/system/identity.ts';
import { AGENT_VERSION } from '../src/version.ts';

describe('agent command line', () => {
  it('defaults to the virtio port and real system changes (the VM case)', () => {
    const options = parseAgentOptions([]);
    assert.deepEqual(options.transport, { kind: 'virtio', portName: 'sandboxd.agent' });
    assert.equal(options.systemChanges, true);
    assert.equal(options.prestartPython, true);
    assert.equal(options.cgroupRoot, undefined);
    assert.equal(options.pythonCommand, 'python3');
    assert.equal(options.helperPythonCommand, 'python3', "the helper runs on the user's Python unless told otherwise");
    assert.equal(options.shell, '/bin/bash');
    assert.equal(options.envFile, undefined);
  });

  it('takes a separate Python for its own helper, a shell and an env file (images not built by sandboxd)', async () => {
    const options = parseAgentOptions([
      '--python',
      '/usr/local/bin/python3',
      '--helper-python',
      '/opt/sandboxd/runtime/bin/python3',
      '--shell',
      '/bin/sh',
      '--env-file',
      '/opt/sandboxd/image-env.json',
    ]);
    assert.equal(options.pythonCommand, '/usr/local/bin/python3');
    assert.equal(options.helperPythonCommand, '/opt/sandboxd/runtime/bin/python3');
    assert.equal(options.shell, '/bin/sh');
    assert.equal(options.envFile, '/opt/sandboxd/image-env.json');
    const dir = await mkdtemp(join(tmpdir(), 'sandboxd-env-'));
    try {
      await writeFile(`${dir}/env.json`, JSON.stringify({ PATH: '/usr/local/bin:/bin', GREETING: 'a b=c' }));
      assert.deepEqual(await readEnvFile(`${dir}/env.json`), { PATH: '/usr/local/bin:/bin', GREETING: 'a b=c' });
      await writeFile(`${dir}/env.json`, JSON.stringify({ 'A=B': 'x' }));
      await assert.rejects(readEnvFile(`${dir}/env.json`), /bad variable/);
      await writeFile(`${dir}/env.json`, JSON.stringify(['PATH=/bin']));
      await assert.rejects(readEnvFile(`${dir}/env.json`), /not a JSON object/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('parses the test transport and switches', () => {
    const options = parseAgentOptions(['--transport', 'unix:/tmp/a.sock', '--no-system-changes', '--cgroup-root', 'off', '--vm-id', 'vm-1']);
    assert.deepEqual(options.transport, { kind: 'unix', path: '/tmp/a.sock' });
    assert.equal(options.systemChanges, false);
    assert.equal(options.cgroupRoot, null);
    assert.equal(options.vmId, 'vm-1');
    assert.throws(() => parseAgentOptions(['--transport', 'tcp:1']), /bad --transport/);
  });

  it('reads the VM id from the kernel command line', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sandboxd-cmdline-'));
    try {
      await writeFile(`${dir}/cmdline`, 'console=ttyS0 sandboxd.vm_id=vm-abc quiet\n');
      assert.equal(await readVmIdFromCmdline(`${dir}/cmdline`), 'vm-abc');
      await writeFile(`${dir}/cmdline`, 'console=ttyS0\n');
      assert.equal(await readVmIdFromCmdline(`${dir}/cmdline`), null);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports the version of its package (the bundle has no package.json)', async () => {
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    assert.equal(AGENT_VERSION, pkg.version);
  });
});
