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
