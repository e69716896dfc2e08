/**
 * Random bytes straight from the kernel (`/dev/urandom`), never from a generator whose state lives in the agent's
 * memory. Clones of one snapshot share that memory: V8's `Math.random` and OpenSSL's DRBG (behind
 * `crypto.randomBytes`, and `randomUUID` with its cache) would hand every clone the same values in the same order
 * until they happen to reseed. The kernel's generator is reseeded by each restore's fix-up (host entropy, credited,
 * then `RNDRESEEDCRNG`) before any operation of the host runs. ESLint keeps the others out of the agent.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** `size` bytes from the kernel's generator (a few bytes: a system call or two, no thread-pool hop). */
export function kernelRandomBytes(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  const fd = openSync('/dev/urandom', 'r');
  try {
    let filled = 0;
    while (filled < size) filled += readSync(fd, bytes, filled, size - filled, null);
  } finally {
    closeSync(fd);
  }
  return bytes;
}
