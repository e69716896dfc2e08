/** Parsers of option values; each throws a UsageError that names the option. */
import { UsageError } from './errors.ts';

export function integer(name: string, min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+$/.test(raw)) throw new UsageError(`${name} must be a whole number, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new UsageError(`${name} must be from ${min} to ${max}, got ${n}`);
    return n;
  };
}

/** Collects repeated `--x k=v` options into an object. */
export function keyValue(name: string) {
  return (raw: string, previous: Record<string, string> = {}): Record<string, string> => {
    const eq = raw.indexOf('=');
    if (eq <= 0) throw new UsageError(`${name} takes KEY=VALUE, got "${raw}"`);
    return { ...previous, [raw.slice(0, eq)]: raw.slice(eq + 1) };
  };
}

/** A volume to mount, as `--volume ID:/path[:ro]` gives it. */
export interface VolumeMountOption {
  volumeId: string;
  mountPath: string;
  readOnly: boolean;
}

/** Collects repeated `--volume ID:/path[:ro]` options (the server checks the path itself). */
export function volumeMount(name: string) {
  return (raw: string, previous: VolumeMountOption[] = []): VolumeMountOption[] => {
    const match = /^([^:]+):(\/[^:]*)(?::(ro|rw))?$/.exec(raw);
    if (!match) throw new UsageError(`${name} takes VOLUME_ID:/path or VOLUME_ID:/path:ro, got "${raw}"`);
    return [...previous, { volumeId: match[1]!, mountPath: match[2]!, readOnly: match[3] === 'ro' }];
  };
}

/** A size such as `512M`, `10G` or `2048` (MiB), in MiB. */
export function sizeMb(name: string) {
  return (raw: string): number => {
    const match = /^(\d+)([MG]i?B?)?$/i.exec(raw.trim());
    if (!match) throw new UsageError(`${name} takes a size such as 512M or 10G, got "${raw}"`);
    const n = Number(match[1]);
    return match[2]?.toUpperCase().startsWith('G') ? n * 1024 : n;
  };
}
