/** The QEMU argv: what a restore must reproduce, and the hardening every VM gets. */
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import {
  buildQemuArgv,
  kernelCommandLine,
  seccompPolicy,
  slotDrives,
  snapshotCompatibilityKey,
  type QemuInstance,
  type QemuMachine,
} from '../../src/vm/qemu/command-line.ts';

const machine: QemuMachine = {
  accelerator: 'tcg',
  vcpuCount: 2,
  memoryMb: 1024,
  kernelPath: '/img/vmlinux',
  initrdPath: '/img/initrd.cpio.gz',
  kernelArgs: kernelCommandLine('tcg', 'vm-1'),
};

const instance: QemuInstance = {
  vmId: 'vm-1',
  qmpSocketPath: '/run/vm-1/qmp.sock',
  agentSocketPath: '/run/vm-1/agent.sock',
  consoleLogPath: '/run/vm-1/console.log',
  overlayPath: '/run/vm-1/disk.qcow2',
  memoryFile: { path: '/snap/memory', shared: true },
  network: 'none',
  transfer: { dir: '/run/vm-1/transfer', writable: true },
  volumeSlots: slotDrives(),
  incoming: false,
  startPaused: true,
  runAsUser: 'sandboxd-vm',
  seccomp: seccompPolicy(true),
};

function option(argv: string[], name: string): string[] {
  return argv.flatMap((arg, i) => (arg === name ? [argv[i + 1]!] : []));
}

describe('QEMU command line', () => {
  test('a microvm with ACPI, no default devices, no reboot, paused until the cgroup is set', () => {
    const argv = buildQemuArgv(machine, instance);
    assert.deepEqual(option(argv, '-machine'), ['microvm,acpi=on,memory-backend=mem']);
    for (const flag of ['-nodefaults', '-no-user-config', '-nographic', '-no-reboot', '-S']) assert.ok(argv.includes(flag), flag);
    assert.deepEqual(option(argv, '-smp'), ['2']);
    assert.deepEqual(option(argv, '-m'), ['1024M']);
  });

  test('TCG uses multi-threaded TCG with -cpu max; KVM uses -cpu host and no fixed TSC frequency', () => {
    assert.deepEqual(
      [option(buildQemuArgv(machine, instance), '-accel'), option(buildQemuArgv(machine, instance), '-cpu')],
      [['tcg,thread=multi,tb-size=256'], ['max']],
    );
    const kvm = { ...machine, accelerator: 'kvm' as const, kernelArgs: kernelCommandLine('kvm', 'vm-1') };
    const argv = buildQemuArgv(kvm, instance);
    assert.deepEqual([option(argv, '-accel'), option(argv, '-cpu')], [['kvm'], ['host']]);
    assert.ok(!option(argv, '-append')[0]!.includes('tsc_early_khz'));
    assert.ok(option(buildQemuArgv(machine, instance), '-append')[0]!.includes('tsc_early_khz='));
  });

  test("the translated-code cache is the instance's (SANDBOXD_TCG_CACHE_MB): TCG only", () => {
    assert.deepEqual(option(buildQemuArgv(machine, { ...instance, tcgCacheMb: 64 }), '-accel'), ['tcg,thread=multi,tb-size=64']);
    const kvm = { ...machine, accelerator: 'kvm' as const, kernelArgs: kernelCommandLine('kvm', 'vm-1') };
    assert.deepEqual(option(buildQemuArgv(kvm, { ...instance, tcgCacheMb: 64 }), '-accel'), ['kvm']);
  });

  test('QEMU drops to the VM user under seccomp that forbids spawning processes', () => {
    const argv = buildQemuArgv(machine, instance);
    assert.deepEqual(option(argv, '-runas'), ['sandboxd-vm']);
    const [sandbox] = option(argv, '-sandbox');
    assert.match(sandbox!, /^on,.*spawn=deny/);
    // -runas needs setuid after the filter is installed.
    assert.ok(!sandbox!.includes('elevateprivileges=deny'));
    assert.match(seccompPolicy(false), /elevateprivileges=deny/);
  });

  test('RAM is a shared file for snapshot sources and a private mapping of it for clones', () => {
    assert.match(option(buildQemuArgv(machine, instance), '-object')[0]!, /^memory-backend-file,id=mem,size=1024M,mem-path=\/snap\/memory,share=on$/);
    const clone = buildQemuArgv(machine, { ...instance, memoryFile: { path: '/snap/memory', shared: false }, incoming: true });
    assert.match(option(clone, '-object')[0]!, /share=off$/);
    assert.deepEqual(option(clone, '-incoming'), ['defer']);
    assert.ok(!clone.includes('-S'), '-incoming defer already starts paused');
  });

  test('RAM without a file is still the backend "mem", so a capture of a cold-booted VM finds its RAM block by name', () => {
    const { memoryFile: _file, ...anonymous } = instance;
    const argv = buildQemuArgv(machine, anonymous);
    assert.deepEqual(option(argv, '-machine'), ['microvm,acpi=on,memory-backend=mem']);
    assert.deepEqual(
      option(argv, '-object').filter((value) => value.startsWith('memory-backend')),
      ['memory-backend-ram,id=mem,size=1024M'],
    );
  });

  test('snapshot sources and clones have the same devices in the same order, whatever the network', () => {
    const devices = (argv: string[]) => option(argv, '-device').map((device) => device.replace(/,netdev=net0$/, ''));
    const source = buildQemuArgv(machine, instance);
    const clone = buildQemuArgv(machine, { ...instance, memoryFile: { path: '/snap/memory', shared: false }, incoming: true, network: 'user' });
    assert.deepEqual(devices(clone), devices(source));
    assert.deepEqual(option(source, '-netdev'), []);
    assert.deepEqual(option(clone, '-netdev'), ['user,id=net0,ipv6=off']);
    // Without free-page reporting: QEMU 7.2 would punch the reported pages out of the snapshot file clones share.
    assert.ok(devices(source).includes('virtio-balloon-device,id=balloon'), 'the balloon, without free-page reporting');
    assert.ok(devices(source).includes('virtserialport,chardev=agent,name=sandboxd.agent'));
  });

  test('four volume slots with placeholders; a restore puts volumes in them without changing the devices', () => {
    const devices = (argv: string[]) => option(argv, '-device');
    const source = buildQemuArgv(machine, instance);
    const withVolumes = buildQemuArgv(machine, {
      ...instance,
      incoming: true,
      volumeSlots: slotDrives([
        { slot: 1, imagePath: '/vol/a,b.img', format: 'raw' },
        { slot: 3, imagePath: '/run/vm-1/vol3.qcow2', format: 'qcow2' },
      ]),
    });
    assert.deepEqual(devices(withVolumes), devices(source));
    assert.deepEqual(
      devices(source).filter((device) => device.includes('drive=vol')),
      [0, 1, 2, 3].map((slot) => `virtio-blk-device,drive=vol${slot},serial=sandboxd-vol${slot}`),
    );
    assert.equal(option(withVolumes, '-drive').length, 1, 'the root disk alone is a -drive');
    const empty = { driver: 'null-co', size: 0 };
    assert.deepEqual(
      option(withVolumes, '-blockdev').map((node) => JSON.parse(node)),
      [
        { driver: 'raw', 'node-name': 'vol0', discard: 'unmap', file: empty },
        { driver: 'raw', 'node-name': 'vol1', discard: 'unmap', file: { driver: 'file', filename: '/vol/a,b.img', discard: 'unmap' } },
        { driver: 'raw', 'node-name': 'vol2', discard: 'unmap', file: empty },
        {
          driver: 'raw',
          'node-name': 'vol3',
          discard: 'unmap',
          file: { driver: 'qcow2', discard: 'unmap', file: { driver: 'file', filename: '/run/vm-1/vol3.qcow2', discard: 'unmap' } },
        },
      ],
    );
    assert.throws(() => buildQemuArgv(machine, { ...instance, volumeSlots: [] }), /4 volume slots/);
  });

  test("the transfer share is a 9p export of the VM's area, read-only when the area is not a capped tmpfs", () => {
    const argv = buildQemuArgv(machine, instance);
    assert.deepEqual(option(argv, '-fsdev'), ['local,id=transfer,path=/run/vm-1/transfer,security_model=none']);
    assert.ok(option(argv, '-device').includes('virtio-9p-device,fsdev=transfer,mount_tag=sandboxd.transfer'));
    const readOnly = buildQemuArgv(machine, { ...instance, transfer: { dir: '/run/vm-1/transfer', writable: false } });
    assert.deepEqual(option(readOnly, '-fsdev'), ['local,id=transfer,path=/run/vm-1/transfer,security_model=none,readonly=on']);
  });

  test('commas in paths are escaped for QEMU option parsing', () => {
    const argv = buildQemuArgv(machine, { ...instance, overlayPath: '/run/a,b/disk.qcow2' });
    assert.ok(option(argv, '-drive')[0]!.includes('file=/run/a,,b/disk.qcow2,'));
  });

  test('snapshots are keyed by what they depend on: the QEMU version and the accelerator, stable otherwise', () => {
    const key = snapshotCompatibilityKey('tcg', '7.2.19');
    assert.match(key, /^[0-9a-f]{12}$/);
    assert.equal(snapshotCompatibilityKey('tcg', '7.2.19'), key);
    assert.notEqual(snapshotCompatibilityKey('tcg', '7.2.20'), key);
    assert.notEqual(snapshotCompatibilityKey('kvm', '7.2.19'), key);
  });

  test('the VM id is in argv so that a later server can recognise the process', () => {
    assert.deepEqual(option(buildQemuArgv(machine, instance), '-name'), ['sandboxd.vm-1,process=sandboxd-qemu']);
    assert.ok(machine.kernelArgs.includes('sandboxd.vm_id=vm-1'));
  });
});
