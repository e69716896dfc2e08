/**
 * Paths inside a VM, as users give them (upload `remote_path`, download `filename`, a terminal's `cwd` and
 * `shell`). They travel to the guest agent in a request line, so a path must be one Linux accepts (PATH_MAX
 * 4096 bytes with the terminating NUL, so 4095 of text; NAME_MAX 255 bytes per name; no NUL inside) before
 * it leaves the API: a 65,536-character `remote_path` once overflowed the agent link's HTTP/2 header limit
 * and cost the session its VM.
 */
import path from 'node:path/posix';
import { Type } from 'typebox';
import { GUEST_HOME } from '../../core/files.ts';

export const GUEST_PATH_MAX_BYTES = 4095;
export const GUEST_NAME_MAX_BYTES = 255;

/** The Ajv format name of a guest path (registered in validator-compiler.ts). */
export const GUEST_PATH_FORMAT = 'guest-path';

export const GUEST_PATH_RULE = `a path in the VM (absolute, or relative to ${GUEST_HOME}) of at most ${GUEST_PATH_MAX_BYTES} bytes once resolved, each name at most ${GUEST_NAME_MAX_BYTES} bytes, without NUL bytes`;

/** What is wrong with a guest path, or null. Relative paths are measured as the guest will see them. */
export function guestPathProblem(given: string): string | null {
  if (given.includes('\0')) return 'contains a NUL byte';
  if (given.trim() === '') return 'is empty';
  if (Buffer.byteLength(path.resolve(GUEST_HOME, given)) > GUEST_PATH_MAX_BYTES)
    return `is longer than ${GUEST_PATH_MAX_BYTES} bytes once resolved against ${GUEST_HOME}`;
  const long = given.split('/').find((name) => Buffer.byteLength(name) > GUEST_NAME_MAX_BYTES);
  if (long !== undefined) return `has a name longer than ${GUEST_NAME_MAX_BYTES} bytes ("${long.slice(0, 24)}…")`;
  return null;
}

/** A guest path in a JSON or form body. */
export const GuestPath = (description: string) =>
  Type.String({ minLength: 1, maxLength: GUEST_PATH_MAX_BYTES, format: GUEST_PATH_FORMAT, description: `${description}: ${GUEST_PATH_RULE}` });
