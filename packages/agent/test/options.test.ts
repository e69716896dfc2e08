import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAgentOptions } from '../src/options.ts';
import { readVmIdFromCmdline } from '../src/system/identity.ts';
import { AGENT_VERSION } from '../src/version.ts';

describe('agent command line', () => {
  it('defaults to the virtio port and real system changes (the VM case)', () => {
    const options = parseAgentOptions([]);
    assert.deepEqual(options.transport, { kind: 'virtio', portName: 'sandboxd.agent' });
    assert.equal(options.systemChanges, true);
    assert.equal(options.prestartPython, true);
    assert.equal(options.cgroupRoot, undefined);
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
