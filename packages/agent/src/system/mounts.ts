/** The guest's mount table, from `/proc/self/mounts` (empty when it cannot be read). */
import { readFile } from 'node:fs/promises';

/** One mounted file system. */
export interface Mount {
  source: string;
  target: string;
  type: string;
}

export async function readMounts(): Promise<Mount[]> {
  const text = await readFile('/proc/self/mounts', 'utf8').catch(() => '');
  return text
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields.length >= 3)
    .map(([source, target, type]) => ({ source: source!, target: target!, type: type! }));
}
