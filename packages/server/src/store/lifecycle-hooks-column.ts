/**
 * The JSON text of a `lifecycle_hooks` column (sessions, vms): the API's shape, `{"pre_stop": {"command",
 * "timeout_seconds"}}`, so a row read by hand says what the user asked for. Null: no hooks.
 */
import type { LifecycleHooks } from '../model.ts';

interface StoredHooks {
  pre_stop?: { command: string; timeout_seconds: number } | null;
}

export function hooksToColumn(hooks: LifecycleHooks | null): string | null {
  if (!hooks?.preStop) return null;
  const stored: StoredHooks = { pre_stop: { command: hooks.preStop.command, timeout_seconds: hooks.preStop.timeoutSeconds } };
  return JSON.stringify(stored);
}

export function hooksFromColumn(text: string | null): LifecycleHooks | null {
  if (text === null) return null;
  const stored = JSON.parse(text) as StoredHooks;
  const preStop = stored.pre_stop ? { command: stored.pre_stop.command, timeoutSeconds: stored.pre_stop.timeout_seconds } : null;
  return preStop ? { preStop } : null;
}
