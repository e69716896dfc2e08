/** Identifier formats. */
import { randomBytes, randomUUID } from 'node:crypto';

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

export function newSessionId(): string {
  return randomUUID();
}

/**
 * `vm-` + 16 base32 characters (80 bits). Lower-case letters and digits only, so a VM id is also a valid
 * hostname and DNS label (the guest's hostname, and `{vm_id}-{port}.<app domain>` preview hosts).
 */
export function newVmId(): string {
  return `vm-${randomBase32(16)}`;
}

/** `shr_` + 20 base32 characters (100 bits). */
export function newShareId(): string {
  return `shr_${randomBase32(20)}`;
}

/** `snap_` + 16 base32 characters (80 bits). Also a directory name on the node that holds the snapshot. */
export function newSnapshotId(): string {
  return `snap_${randomBase32(16)}`;
}

/** `tpl_` + 16 base32 characters (80 bits). */
export function newTemplateId(): string {
  return `tpl_${randomBase32(16)}`;
}

/** `vol_` + 16 base32 characters (80 bits). Also its image's file name on the node that holds it. */
export function newVolumeId(): string {
  return `vol_${randomBase32(16)}`;
}

/** `ctx_` + 16 base32 characters (80 bits): a session's extra Python context. */
export function newPythonContextId(): string {
  return `ctx_${randomBase32(16)}`;
}

/** `vlt_` + 16 base32 characters (80 bits). */
export function newVaultId(): string {
  return `vlt_${randomBase32(16)}`;
}

/**
 * A vault placeholder: `sbxv_` + 26 base32 characters (130 bits). Random, so that a placeholder found anywhere
 * names exactly one session's secret, and never occurs by chance in other traffic.
 */
export function newVaultPlaceholder(): string {
  return `sbxv_${randomBase32(26)}`;
}

/** `cs_` + 20 base32 characters (100 bits): a web console session (its name, not its credential). */
export function newConsoleSessionId(): string {
  return `cs_${randomBase32(20)}`;
}

/** `cd_` + 20 base32 characters (100 bits): a custom domain claim. */
export function newCustomDomainId(): string {
  return `cd_${randomBase32(20)}`;
}

function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += BASE32[bytes[i]! % 32];
  return out;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}
