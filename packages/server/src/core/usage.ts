/**
 * Daily usage of one user, for the console's charts: per UTC day, the executions started, the seconds their
 * VMs ran (a VM running across midnight counts in both days; one still running counts up to now) and the CPU
 * seconds their code used, and what their VMs sent out through the egress proxy (the attempts of the egress log,
 * kept for VMs under a restricted policy or with a vault, and the vault's swaps and flags). Executions, egress and
 * vault use are counted per day by the store (one row per day, however many there were); VM runs are cut at
 * midnight here. The same on every node.
 */
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { egressPerDaySince, executionsPerDaySince, vaultUsePerDaySince, vmRunsSince } from '../store/usage-store.ts';
import type { Database } from '../store/database.ts';

export const MAX_USAGE_DAYS = 90;
const DAY_MS = 86_400_000;

export interface DailyUsage {
  /** YYYY-MM-DD, UTC. */
  date: string;
  executions: number;
  vmSeconds: number;
  cpuSeconds: number;
  /** Connection attempts in the egress log (VMs under a restricted policy or with a vault), and how many were refused. */
  egressAttempts: number;
  egressRefused: number;
  egressBytesSent: number;
  egressBytesReceived: number;
  /** Requests a vault secret was swapped into, and placeholders flagged. */
  vaultSubstituted: number;
  vaultFlagged: number;
}

/** The last `days` UTC days, today included, oldest first; days without use are zeros. */
export async function dailyUsage(database: Database, clock: Clock, principal: Principal, days: number): Promise<DailyUsage[]> {
  const now = clock.now().getTime();
  const firstDay = Math.floor(now / DAY_MS) * DAY_MS - (days - 1) * DAY_MS;
  const since = new Date(firstDay).toISOString();
  const result: DailyUsage[] = Array.from({ length: days }, (_, i) => ({
    date: new Date(firstDay + i * DAY_MS).toISOString().slice(0, 10),
    executions: 0,
    vmSeconds: 0,
    cpuSeconds: 0,
    egressAttempts: 0,
    egressRefused: 0,
    egressBytesSent: 0,
    egressBytesReceived: 0,
    vaultSubstituted: 0,
    vaultFlagged: 0,
  }));
  const dayOf = (ms: number) => Math.floor((ms - firstDay) / DAY_MS);

  const byDate = new Map(result.map((day) => [day.date, day]));
  for (const row of await executionsPerDaySince(database.db, principal.userId, since)) {
    const day = byDate.get(row.day);
    if (!day) continue;
    day.executions = row.executions;
    day.cpuSeconds = row.cpu_seconds;
  }
  for (const row of await egressPerDaySince(database.db, principal.userId, since)) {
    const day = byDate.get(row.day);
    if (!day) continue;
    Object.assign(day, { egressAttempts: row.attempts, egressRefused: row.refused, egressBytesSent: row.bytes_sent, egressBytesReceived: row.bytes_received });
  }
  for (const row of await vaultUsePerDaySince(database.db, principal.userId, since)) {
    const day = byDate.get(row.day);
    if (day) Object.assign(day, { vaultSubstituted: row.substituted, vaultFlagged: row.flagged });
  }
  for (const vm of await vmRunsSince(database.db, principal.userId, since)) {
    let start = Math.max(Date.parse(vm.started_at!), firstDay);
    const end = Math.min(vm.ended_at ? Date.parse(vm.ended_at) : now, now);
    while (start < end) {
      const dayEnd = firstDay + (dayOf(start) + 1) * DAY_MS;
      const slice = Math.min(end, dayEnd) - start;
      const day = result[dayOf(start)];
      if (day) day.vmSeconds += slice / 1000;
      start += slice;
    }
  }
  for (const day of result) {
    day.vmSeconds = Math.round(day.vmSeconds * 10) / 10;
    day.cpuSeconds = Math.round(day.cpuSeconds * 1000) / 1000;
  }
  return result;
}
