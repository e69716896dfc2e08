/**
 * Errors of the VM driver. The engine maps them to the API's codes; their messages are for operators (they
 * name files and stages), not for end users.
 */
import type { VmStage } from './vm-driver.ts';

/** Codes of {@link VmError}. */
export type VmErrorCode =
  /** A request the driver cannot honour (bad id, memory out of range, snapshot mismatch). */
  | 'VM_INVALID_REQUEST'
  /** No live VM with that id. */
  | 'VM_NOT_FOUND'
  /** The VM exists but cannot do this (e.g. save a snapshot of a VM not booted for it). */
  | 'VM_BAD_STATE'
  /** The host lacks something (QEMU binary, accelerator, permissions). */
  | 'VM_HOST_UNSUPPORTED'
  /** A VM with user networking cannot start: the host's network guard is not active (it fails closed). */
  | 'VM_NETWORK_UNGUARDED'
  /** The hypervisor failed while running an operation. */
  | 'VM_OPERATION_FAILED';

/** A driver failure with a stable code. */
export class VmError extends Error {
  override name = 'VmError';
  constructor(
    readonly code: VmErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * A VM did not come up. `stage` says where it died: `spawn` (the hypervisor did not start), `kernel` (no
 * `sandboxd-stage: initramfs` marker on the console), `initramfs` (no `init` marker), `init` (no `agent`
 * marker), `agent` (no handshake), `restore` (loading the snapshot failed) or `memory` (the guest did not take
 * its memory size). The VM has been killed and cleaned up when this is thrown.
 */
export class VmBootError extends Error {
  override name = 'VmBootError';
  readonly code = 'VM_BOOT_FAILED';
  constructor(
    readonly vmId: string,
    readonly stage: VmStage,
    readonly reason: string,
    /** Last lines of the serial console and of the hypervisor's log. */
    readonly consoleTail: string,
    options?: ErrorOptions,
  ) {
    super(`VM ${vmId} failed in stage "${stage}": ${reason}${consoleTail ? `\n--- console tail ---\n${consoleTail}` : ''}`, options);
  }
}
