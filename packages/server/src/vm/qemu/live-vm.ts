/**
 * A VM this driver runs or adopted, and its life as one state field. Every question that used to be a flag
 * (is its end expected? is it reported at all? may it be saved? are its snapshot files kept?) is answered from
 * the state, and the allowed transitions are the table below, nowhere else.
 */
import type { ChildProcess } from 'node:child_process';
import type { VmInfo } from '../vm-driver.ts';
import { VmError } from '../vm-errors.ts';
import type { QemuMachine } from './command-line.ts';
import type { ProcessIdentity } from './process.ts';
import type { QmpClient } from './qmp-client.ts';
import type { RunPaths } from './run-dir.ts';

/**
 * - `starting`: spawned; boot or restore under way.
 * - `running`: up and handed to the caller; an end is reported as unexpected.
 * - `abandoned`: the start failed or was cancelled; the thrown `VmBootError` reports it, no exit event.
 * - `killing`: `kill` was asked for; the end is reported as expected.
 * - `consumed`: `saveSnapshot` took it; its end is the snapshot's completion (not reported, its snapshot
 *   files are the snapshot's).
 * - `exited`: the process is gone and its files and limits are removed.
 */
export type VmState = 'starting' | 'running' | 'abandoned' | 'killing' | 'consumed' | 'exited';

/** What happens to a VM: it came `up`, its start was `abandon`ed, `kill` was asked, a snapshot `consume`d it, its process `end`ed. */
export type VmEvent = 'up' | 'abandon' | 'kill' | 'consume' | 'end';

const TRANSITIONS: Record<VmState, Partial<Record<VmEvent, VmState>>> = {
  starting: { up: 'running', abandon: 'abandoned', kill: 'abandoned', end: 'exited' },
  running: { kill: 'killing', consume: 'consumed', end: 'exited' },
  abandoned: { abandon: 'abandoned', kill: 'abandoned', end: 'exited' },
  killing: { kill: 'killing', end: 'exited' },
  // A failed save kills the VM: still no exit event, the save's error reports it.
  consumed: { kill: 'consumed', end: 'exited' },
  exited: {},
};

/** How a VM's process ended. */
export interface ExitRecord {
  exitCode: number | null;
  signal: string | null;
}

/** A VM this driver runs or adopted. */
export interface LiveVm {
  info: VmInfo;
  paths: RunPaths;
  identity: ProcessIdentity;
  /** The string in its argv that identifies it in /proc (`vmMarker`). */
  marker: string;
  /** The QEMU process when this driver spawned it; null for an adopted VM. */
  child: ChildProcess | null;
  qmp: QmpClient | null;
  cgroupPaths: string[];
  snapshotDir: string | null;
  /** The machine, for a capture's receiving QEMU; null for a VM adopted from an older state file. */
  machine: QemuMachine | null;
  /** The disk layer QEMU writes now (a live capture moves it to a new one); null when unknown (older state file). */
  overlayPath: string | null;
  /** Whether its transfer share is exported writable (a capture's receiving QEMU must do the same). */
  transferWritable: boolean;
  /** A capture of this VM is under way (one at a time). */
  capturing: boolean;
  state: VmState;
  /** The reason QMP's SHUTDOWN event gave, if any. */
  shutdownReason: string | null;
  /** Resolves with the process' end. */
  exited: Promise<ExitRecord>;
  /** Resolves once the VM's files and limits are gone. */
  finished: Promise<void>;
  /** Resolves when boot/restore is done with the run directory (its failure path reads the logs). */
  startSettled: Promise<void>;
}

/** Applies `event` to the VM's state; throws `VM_BAD_STATE` when its state does not allow it. */
export function transition(vm: Pick<LiveVm, 'state' | 'info'>, event: VmEvent): VmState {
  const next = TRANSITIONS[vm.state][event];
  if (!next) throw new VmError('VM_BAD_STATE', `VM ${vm.info.vmId} is ${vm.state}: cannot ${event}`);
  vm.state = next;
  return next;
}

/** Whether the end of a VM in `state` is reported (`exit` event), and as expected or not. */
export function exitToReport(state: VmState): { expected: boolean } | null {
  if (state === 'running') return { expected: false };
  if (state === 'killing') return { expected: true };
  return null;
}

/** The string in a VM's QEMU argv (`-name sandboxd.<id>,…`) that identifies it in /proc. */
export function vmMarker(vmId: string): string {
  return `sandboxd.${vmId}`;
}
