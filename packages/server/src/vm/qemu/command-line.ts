/**
 * The QEMU argv of a VM, as a pure function of its description. A restore must use the same machine and
 * devices, in the same order, as the VM its snapshot was saved from: both come from this one function, and
 * only the parts that may differ (paths, RAM sharing, network backend, `-incoming`) are parameters.
 */
import { createHash } from 'node:crypto';
import { VOLUME_SLOT_COUNT, type Accelerator, type NetworkMode } from '../vm-driver.ts';
import { TRANSFER_MOUNT_TAG, VOLUME_SERIAL_PREFIX } from '@sandboxd/agent/protocol';

/** The name of the guest agent's virtio-serial port (boot contract). */
export const AGENT_PORT_NAME = 'sandboxd.agent';

/**
 * Early TSC frequency for TCG guests: microvm has neither HPET nor PM timer, and under TCG the kernel's TSC
 * calibration against the PIT fails at random and hangs the boot (research notes, section 1).
 */
export const TCG_TSC_KHZ = 2_445_000;

/**
 * Default size of TCG's translated-code cache, MiB (QEMU's own default is 1024). A host-side knob, not part of the
 * machine a snapshot fixes: `QemuInstance.tcgCacheMb` sets it per VM (SANDBOXD_TCG_CACHE_MB).
 */
export const TCG_TRANSLATION_CACHE_MB = 256;

/**
 * What backs one volume slot: a volume's image (raw, or for a read-only attachment a throw-away qcow2 layer over
 * it: see `volume-slots.ts`), or a placeholder (`imagePath` null: an empty disk of 0 bytes).
 */
export interface SlotDrive {
  imagePath: string | null;
  format: 'raw' | 'qcow2';
}

/**
 * The node name of volume slot `slot`: a `raw` block node (`-blockdev node-name=vol<slot>`) whose `file` child is
 * the slot's backing (see `slotChildNode`). The device sees only this node, so the child can be swapped on a
 * running VM (`blockdev-reopen`, `volume-slots.ts`) without the device noticing more than a new size.
 */
export function volumeDriveId(slot: number): string {
  return `vol${slot}`;
}

/**
 * The `file` child of a slot's raw node: QEMU's null driver with no size for a placeholder (the guest sees a
 * 0-byte disk), the image itself for a read-write volume, or the qcow2 layer over it for a read-only one (its
 * backing, the image, opened read-only from the layer's header).
 */
export function slotChildNode(drive: SlotDrive): Record<string, unknown> {
  if (drive.imagePath === null) return { driver: 'null-co', size: 0 };
  const file = { driver: 'file', filename: drive.imagePath, discard: 'unmap' };
  return drive.format === 'raw' ? file : { driver: 'qcow2', discard: 'unmap', file };
}

/** The drives of a VM's slots: each given drive in its slot, a placeholder elsewhere. */
export function slotDrives(drives: readonly { slot: number; imagePath: string; format: 'raw' | 'qcow2' }[] = []): SlotDrive[] {
  return Array.from({ length: VOLUME_SLOT_COUNT }, (_, slot) => {
    const drive = drives.find((d) => d.slot === slot);
    return drive ? { imagePath: drive.imagePath, format: drive.format } : { imagePath: null, format: 'raw' };
  });
}

/** The machine: what a snapshot fixes. */
export interface QemuMachine {
  accelerator: Accelerator;
  vcpuCount: number;
  /** `-m`: the guest's physical RAM. A balloon may keep part of it away from the guest. */
  memoryMb: number;
  kernelPath: string;
  initrdPath: string;
  /** The full kernel command line (see `kernelCommandLine`). */
  kernelArgs: readonly string[];
}

/** One VM's instance of a machine. */
export interface QemuInstance {
  vmId: string;
  qmpSocketPath: string;
  agentSocketPath: string;
  consoleLogPath: string;
  /** The qcow2 overlay; QEMU writes only this file, its backing chain is opened read-only. */
  overlayPath: string;
  /**
   * Guest RAM in a file: `shared` (MAP_SHARED: the guest writes the file, as a snapshot source must) or not
   * (MAP_PRIVATE: copy-on-write over a snapshot's RAM). Undefined: anonymous RAM.
   */
  memoryFile?: { path: string; shared: boolean };
  network: NetworkMode;
  /** The host directory behind the guest's transfer share; read-only when it is not a capped area. */
  transfer: { dir: string; writable: boolean };
  /** The volume slots, `VOLUME_SLOT_COUNT` of them (`slotDrives`). */
  volumeSlots: readonly SlotDrive[];
  /** Start paused, waiting for `migrate-incoming` (restores). */
  incoming: boolean;
  /** Start with the vCPUs stopped (`-S`) until QMP `cont`, e.g. until QEMU is in its cgroup. */
  startPaused: boolean;
  /** Drop to this user after start-up (`-runas`); null keeps QEMU's user. */
  runAsUser: string | null;
  /** `-sandbox` value, or null for none. */
  seccomp: string | null;
  /** TCG's translated-code cache, MiB (`tb-size`; ignored under KVM). Default `TCG_TRANSLATION_CACHE_MB`. */
  tcgCacheMb?: number;
}

/** The kernel command line for the boot contract (packages/server/images/README.md) plus the image's own. */
export function kernelCommandLine(accelerator: Accelerator, vmId: string, imageArgs: readonly string[] = []): string[] {
  const args = ['console=ttyS0', 'quiet', 'rw', 'panic=-1'];
  // A fixed TSC frequency would be wrong on real hardware under KVM, where calibration works.
  if (accelerator === 'tcg') args.push(`tsc_early_khz=${TCG_TSC_KHZ}`);
  // Always configure eth0: a snapshot's clones may get user networking even if the source had none.
  args.push('sandboxd.net=1', `sandboxd.vm_id=${vmId}`);
  return [...args, ...imageArgs];
}

/**
 * What a snapshot saved by this code depends on beyond the guest image: the QEMU version and the machine, as
 * the argv of a representative VM (devices, their order and options) and the kernel command line. Snapshots
 * are kept per key, so changing any of these (here or by a QEMU upgrade) makes new ones instead of failing to
 * restore old ones.
 */
export function snapshotCompatibilityKey(accelerator: Accelerator, qemuVersion: string): string {
  const machine: QemuMachine = {
    accelerator,
    vcpuCount: 1,
    memoryMb: 512,
    kernelPath: 'vmlinux',
    initrdPath: 'initrd',
    kernelArgs: kernelCommandLine(accelerator, 'vm'),
  };
  const argv = buildQemuArgv(machine, {
    vmId: 'vm',
    qmpSocketPath: 'qmp.sock',
    agentSocketPath: 'agent.sock',
    consoleLogPath: 'console.log',
    overlayPath: 'overlay.qcow2',
    memoryFile: { path: 'memory', shared: true },
    network: 'none',
    transfer: { dir: 'transfer', writable: true },
    volumeSlots: slotDrives(),
    incoming: false,
    startPaused: true,
    runAsUser: null,
    seccomp: null,
  });
  return createHash('sha256').update(JSON.stringify({ qemuVersion, argv })).digest('hex').slice(0, 12);
}

/** `-sandbox` value to use with or without `-runas` (see the inline comment). */
export function seccompPolicy(withRunAs: boolean): string {
  // spawn=deny blocks fork/exec, so migration must not use `exec:` URIs (we use unix: and fd:).
  // elevateprivileges=deny would also block the setuid/setgid that -runas performs after the filter is
  // installed (QEMU dies with SIGSYS), so it is only denied when QEMU does not change user.
  const policy = ['on', 'obsolete=deny', 'spawn=deny', 'resourcecontrol=deny'];
  if (!withRunAs) policy.push('elevateprivileges=deny');
  return policy.join(',');
}

/** A QEMU option value with commas doubled, as QEMU's option parser expects inside paths. */
function escapeOptionValue(value: string): string {
  return value.replaceAll(',', ',,');
}

/** The argv (without the program) of `qemu-system-x86_64` for this machine and instance. */
export function buildQemuArgv(machine: QemuMachine, instance: QemuInstance): string[] {
  const e = escapeOptionValue;
  const machineOptions = ['microvm', 'acpi=on']; // ACPI: the Debian kernel finds virtio-mmio devices only through it
  const argv: string[] = [
    // The VM id in argv lets the reaper recognise this process in /proc/<pid>/cmdline.
    '-name',
    `sandboxd.${instance.vmId},process=sandboxd-qemu`,
    '-nodefaults',
    '-no-user-config',
    '-nographic',
    '-no-reboot',
    '-msg',
    'timestamp=on',
  ];
  // Every VM's RAM is the backend `mem`, anonymous or a file: a migration stream names RAM blocks by their
  // backend's id, so a VM booted without a file (a template's build VM) can still be captured into a receiver
  // whose RAM is a file, and that capture restored like any other.
  machineOptions.push('memory-backend=mem');
  argv.push('-machine', machineOptions.join(','));
  // TCG's translation cache defaults to 1 GiB, touched as it fills; capping it keeps QEMU's own memory within
  // the cgroup allowance for overhead (the cache + device emulation).
  const tbSize = instance.tcgCacheMb ?? TCG_TRANSLATION_CACHE_MB;
  argv.push(...(machine.accelerator === 'kvm' ? ['-accel', 'kvm', '-cpu', 'host'] : ['-accel', `tcg,thread=multi,tb-size=${tbSize}`, '-cpu', 'max']));
  argv.push('-m', `${machine.memoryMb}M`, '-smp', String(machine.vcpuCount));
  if (instance.memoryFile) {
    const { path, shared } = instance.memoryFile;
    argv.push('-object', `memory-backend-file,id=mem,size=${machine.memoryMb}M,mem-path=${e(path)},share=${shared ? 'on' : 'off'}`);
  } else {
    argv.push('-object', `memory-backend-ram,id=mem,size=${machine.memoryMb}M`);
  }
  if (instance.seccomp) argv.push('-sandbox', instance.seccomp);
  if (instance.runAsUser) argv.push('-runas', instance.runAsUser);
  argv.push(
    // append=on: the driver may truncate the log to cap its size while QEMU keeps writing.
    '-chardev',
    `file,id=console,path=${e(instance.consoleLogPath)},append=on`,
    '-serial',
    'chardev:console',
    '-qmp',
    `unix:${e(instance.qmpSocketPath)},server=on,wait=off`,
    '-device',
    'virtio-serial-device',
    '-chardev',
    `socket,id=agent,path=${e(instance.agentSocketPath)},server=on,wait=off`,
    '-device',
    `virtserialport,chardev=agent,name=${AGENT_PORT_NAME}`,
    '-drive',
    `id=root,file=${e(instance.overlayPath)},format=qcow2,if=none,discard=unmap`,
    '-device',
    'virtio-blk-device,drive=root',
  );
  if (instance.volumeSlots.length !== VOLUME_SLOT_COUNT) throw new Error(`a VM has ${VOLUME_SLOT_COUNT} volume slots, got ${instance.volumeSlots.length}`);
  // The volume slots, right after the root disk (vdb…, but the guest goes by the serial): a raw node over the
  // slot's backing (`slotChildNode`; JSON, so no path needs escaping). No block node is named in the device
  // state, so a restore may put a volume where its snapshot had a placeholder, and a running VM may swap one in.
  instance.volumeSlots.forEach((drive, slot) => {
    const id = volumeDriveId(slot);
    argv.push(
      '-blockdev',
      JSON.stringify({ driver: 'raw', 'node-name': id, discard: 'unmap', file: slotChildNode(drive) }),
      '-device',
      `virtio-blk-device,drive=${id},serial=${VOLUME_SERIAL_PREFIX}${slot}`,
    );
  });
  argv.push(
    // Entropy for clones: the host's RNG feeds the guest's (microvm's ACPI has no vmgenid device).
    '-device',
    'virtio-rng-device',
    // The balloon sizes the guest (memory.ts). No free-page reporting, although it gives a guest's freed memory
    // back (measured: 579 → 339 MiB within 20 s after a process wrote 256 MiB and exited): Debian's QEMU 7.2
    // discards a reported page of file-backed RAM by punching a hole in the file (ram_block_discard_range), even
    // when the VM maps it privately, so one clone's freed pages would turn to zeros in the snapshot every other clone
    // maps (the suite's run with reporting on lost a desktop VM's service mid-test). Later QEMU releases drop only
    // the private copy; on those, reporting can come back.
    '-device',
    'virtio-balloon-device,id=balloon',
    // The transfer share for large files (transfer-area.ts). security_model=none: the guest sees the host's
    // owners and modes, and nothing is stored in extended attributes.
    '-fsdev',
    `local,id=transfer,path=${e(instance.transfer.dir)},security_model=none${instance.transfer.writable ? '' : ',readonly=on'}`,
    '-device',
    `virtio-9p-device,fsdev=transfer,mount_tag=${TRANSFER_MOUNT_TAG}`,
  );
  // The NIC exists in every VM so that snapshots and clones have the same devices; the backend is what
  // differs. A snapshot is saved without a backend: slirp's state in the stream would make restores that
  // have no user networking fail ("Unknown savevm section 'slirp'").
  if (instance.network === 'user') argv.push('-netdev', 'user,id=net0,ipv6=off', '-device', 'virtio-net-device,id=nic0,netdev=net0');
  else argv.push('-device', 'virtio-net-device,id=nic0');
  argv.push('-kernel', machine.kernelPath, '-initrd', machine.initrdPath, '-append', machine.kernelArgs.join(' '));
  if (instance.incoming) argv.push('-incoming', 'defer');
  else if (instance.startPaused) argv.push('-S');
  return argv;
}
