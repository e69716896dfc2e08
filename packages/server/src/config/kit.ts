/**
 * The configuration's kit: a setting (its environment variable, description, parser and default), the parsers the
 * areas share, and the error that names a bad variable. Each area declares its settings with it (config/<area>.ts);
 * config/index.ts reads them.
 */
import net from 'node:net';

/** One setting: read from `env`, parsed by `parse` (which throws a message naming what is wrong), else `fallback()`. */
export interface Setting<T> {
  /** The environment variable that sets it. */
  env: string;
  /** Shown in errors and the README. */
  description: string;
  parse: (raw: string) => T;
  fallback: () => T;
  /** The default in words, when `fallback()` depends on the machine (its host name, CPUs, memory, directories). */
  defaultText?: string;
}

/** The values of a table of settings, by name. */
export type SettingValues<T extends Record<string, Setting<unknown>>> = { [K in keyof T]: ReturnType<T[K]['fallback']> };

/** Thrown when an environment variable has a bad value; the message names the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Parses integers strictly: "8080" yes, "80a", "8.5" and "" no. */
export function integer(min: number, max: number) {
  return (raw: string): number => {
    if (!/^-?\d+$/.test(raw.trim())) throw new Error(`expected an integer, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`expected an integer from ${min} to ${max}, got ${n}`);
    return n;
  };
}

/** Parses decimals strictly: "0.5", "2" yes, ".5", "1e3" and "" no. */
export function decimal(min: number, max: number) {
  return (raw: string): number => {
    if (!/^\d+(\.\d+)?$/.test(raw.trim())) throw new Error(`expected a number like 0.5, got "${raw}"`);
    const n = Number(raw);
    if (n < min || n > max) throw new Error(`expected a number from ${min} to ${max}, got ${n}`);
    return n;
  };
}

/** Parses one of `values`, exactly as written. */
export function oneOf<T extends string>(...values: T[]) {
  return (raw: string): T => {
    if (!(values as string[]).includes(raw)) throw new Error(`expected one of ${values.join(', ')}, got "${raw}"`);
    return raw as T;
  };
}

/** `HOST:PORT` of a listener of its own (`[v6]:port` too), or `off`. */
export function listenAddress(raw: string): string {
  if (raw === 'off') return 'off';
  const match = /^(.+):(\d{1,5})$/.exec(raw);
  if (!match || Number(match[2]) > 65_535) throw new Error(`expected HOST:PORT or off, got "${raw}"`);
  return raw;
}

/** Any text but an empty one. */
export function text(raw: string): string {
  if (raw.trim() === '') throw new Error('must not be empty');
  return raw;
}

/** Parses 1/true/yes/on and 0/false/no/off, in any case. */
export function booleanFlag(raw: string): boolean {
  if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
  throw new Error(`expected true or false, got "${raw}"`);
}

const DURATION_UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses a comma-separated list of durations such as "5s,30s,2m,1h,1d" (units ms, s, m, h, d) into milliseconds. */
export function durationList(raw: string): number[] {
  return raw.split(',').map((part) => {
    const match = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(part);
    if (!match) throw new Error(`expected durations like "5s,30s,2m,1h" (units ms, s, m, h, d), got "${part.trim()}"`);
    const ms = Number(match[1]) * DURATION_UNITS_MS[match[2]!]!;
    if (ms < 1 || ms > 7 * 86_400_000) throw new Error(`each delay must be from 1ms to 7d, got "${part.trim()}"`);
    return ms;
  });
}

/** Parses `1.1.1.1, 127.0.0.1:5353, ::1, [2001:db8::1]:53` into what `dns.Resolver#setServers` takes. */
export function dnsServers(raw: string): string[] {
  return raw.split(',').map((part) => {
    const entry = part.trim();
    const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
    const v4 = /^([\d.]+)(?::(\d{1,5}))?$/.exec(entry);
    const [address, port] = bracketed ? [bracketed[1]!, bracketed[2]] : v4 ? [v4[1]!, v4[2]] : [entry, undefined];
    const family = net.isIP(address);
    if (family === 0) throw new Error(`expected IP addresses with an optional port (a name cannot be a resolver), got "${entry}"`);
    if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) throw new Error(`port out of range in "${entry}"`);
    if (port === undefined) return address;
    return family === 6 ? `[${address}]:${port}` : `${address}:${port}`;
  });
}
