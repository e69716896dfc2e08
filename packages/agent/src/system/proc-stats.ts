/** Parsers of the guest's /proc files behind `GET /v1/usage`. */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import type { UsageResponse } from '../protocol/messages.ts';

// /proc/stat counts in USER_HZ, which is 100 on every Linux architecture the guest can run.
const USER_HZ = 100;

/** CPU times from /proc/stat's aggregate `cpu` line. */
export function parseProcStat(text: string): UsageResponse['cpu'] {
  const lines = text.split('\n');
  const total = lines.find((line) => line.startsWith('cpu '));
  const [user = 0, nice = 0, system = 0, idle = 0, , irq = 0, softirq = 0, steal = 0] = (total ?? '').trim().split(/\s+/).slice(1).map(Number);
  return {
    busySeconds: (user + nice + system + irq + softirq + steal) / USER_HZ,
    userSeconds: (user + nice) / USER_HZ,
    systemSeconds: system / USER_HZ,
    idleSeconds: idle / USER_HZ,
    count: lines.filter((line) => /^cpu\d+ /.test(line)).length,
  };
}

/** Memory figures from /proc/meminfo (kB → bytes). */
export function parseMeminfo(text: string): UsageResponse['memory'] {
  const field = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(text)?.[1] ?? 0) * 1024;
  const totalBytes = field('MemTotal');
  const availableBytes = field('MemAvailable');
  return { totalBytes, availableBytes, usedBytes: totalBytes - availableBytes };
}

/** Reads all usage figures. */
export async function readUsage(): Promise<UsageResponse> {
  const [stat, meminfo, uptime] = await Promise.all([readFile('/proc/stat', 'utf8'), readFile('/proc/meminfo', 'utf8'), readFile('/proc/uptime', 'utf8')]);
  const [one = 0, five = 0, fifteen = 0] = loadavg();
  return {
    cpu: parseProcStat(stat),
    memory: parseMeminfo(meminfo),
    uptimeSeconds: Number(uptime.split(' ')[0]),
    loadAverage: [one, five, fifteen],
  };
}

/** Guest uptime in seconds. */
export async function readUptimeSeconds(): Promise<number> {
  return Number((await readFile('/proc/uptime', 'utf8')).split(' ')[0]);
}
