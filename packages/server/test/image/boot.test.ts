/**
 * Boots the cached test image under QEMU (TCG) and checks the boot contract from the guest's side:
 * stage markers in order on the serial console, the agent reachable on its named virtio-serial port, a
 * writable root, the runtime mounts, user-net defaults and the tools users expect.
 */
import { strict as assert } from 'node:assert';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { defaultCacheDir, ensureGuestImage } from '../../src/image/index.ts';
import { bootTestVm, type TestVm } from './boot-vm.ts';

const TEST_AGENT = fileURLToPath(new URL('./fixtures/test-agent.mjs', import.meta.url));
const BOOT_TIMEOUT_MS = 120_000;

describe('guest image boot', { timeout: 15 * 60 * 1000 }, () => {
  let vm: TestVm;
  before(async () => {
    const image = await ensureGuestImage({ cacheDir: defaultCacheDir(), agentBundlePath: TEST_AGENT });
    vm = await bootTestVm(image);
  });
  after(async () => {
    await vm?.stop();
  });

  test('the console shows the initramfs, init and agent stage markers in that order', async () => {
    await vm.waitForConsole(/^node ok v18\./, BOOT_TIMEOUT_MS);
    const lines = (await vm.consoleText()).split(/\r?\n/);
    const markers = lines.filter((line) => line.startsWith('sandboxd-'));
    assert.deepEqual(markers, ['sandboxd-stage: initramfs', 'sandboxd-stage: init', 'sandboxd-stage: agent']);
  });

  test('the agent is reachable on the sandboxd.agent port and runs as PID 1 under tini', async () => {
    const reply = await vm.run('cat /proc/1/cmdline | tr "\\0" " "');
    assert.equal(reply.code, 0);
    assert.match(reply.out, /^\/usr\/bin\/tini -s -- \/usr\/bin\/node \/opt\/sandboxd\/agent\.mjs/);
  });

  test('the root disk is writable and the runtime filesystems are mounted', async () => {
    const reply = await vm.run("touch /root/written && awk '{print $2, $3, substr($4, 1, 2)}' /proc/mounts");
    assert.equal(reply.code, 0, reply.out);
    for (const mount of ['/ ext4 rw', '/tmp tmpfs rw', '/run tmpfs rw', '/dev/shm tmpfs rw', '/dev/pts devpts rw', '/sys/fs/cgroup cgroup2 rw']) {
      assert.ok(reply.out.split('\n').includes(mount), `missing mount "${mount}" in:\n${reply.out}`);
    }
  });

  test('networking gets the QEMU user-net defaults and /etc/resolv.conf points at /run', async () => {
    const reply = await vm.run('ip -4 -o addr show eth0; ip route show default; readlink /etc/resolv.conf; cat /etc/resolv.conf; hostname');
    assert.equal(reply.code, 0, reply.out);
    assert.match(reply.out, /inet 10\.0\.2\.15\/24/);
    assert.match(reply.out, /default via 10\.0\.2\.2/);
    assert.match(reply.out, /\/run\/resolv\.conf\nnameserver 10\.0\.2\.3\nsandbox\n/);
  });

  test('python3, pip, venv, git and curl are installed', async () => {
    const reply = await vm.run(
      'python3 -c "print(6 * 7)" && python3 -m pip --version && python3 -m venv --help >/dev/null && git --version && curl --version | head -1',
      120_000,
    );
    assert.equal(reply.code, 0, reply.out);
    assert.match(reply.out, /^42\n/);
  });
});
