import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** Length of a layer id: 64 bits of SHA-256 is plenty for a per-machine cache and keeps paths readable. */
const LAYER_ID_HEX = 16;

/** One named input of a layer: its name is hashed too, so moving a value between inputs changes the hash. */
export type HashInput = readonly [name: string, value: string | Buffer];

/**
 * Hashes a layer's inputs into its id. Each input is length-prefixed, so no two different input lists
 * can produce the same byte stream.
 */
export function hashInputs(inputs: readonly HashInput[]): string {
  const hash = createHash('sha256');
  for (const [name, value] of inputs) {
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    hash.update(`${name.length}:${name}:${bytes.length}:`);
    hash.update(bytes);
  }
  return hash.digest('hex').slice(0, LAYER_ID_HEX);
}

/** Full SHA-256 (hex) of a file's bytes, streamed. */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Full SHA-256 (hex) of a buffer. */
export function sha256(bytes: Buffer | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}
