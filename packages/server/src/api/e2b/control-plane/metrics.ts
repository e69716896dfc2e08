/**
 * GET /sandboxes/{sandboxID}/metrics (`getMetrics`): E2B's `SandboxMetric[]`, measured when asked. sandboxd keeps no
 * history of a VM's figures, so a running sandbox answers one sample, taken now: CPU use over a short window
 * (two readings of the guest's /proc counters through its agent), memory as the guest sees it, and the root
 * filesystem's use (`df`, a fixed command with no caller input). A paused sandbox, or a window (`start`, `end`,
 * Unix seconds) that does not hold now (its end may lag by a minute), answers an empty list, as E2B does for a window without samples.
 */
import type { GuestAgent } from '../../../core/vm-engine.ts';
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { ownedSandbox } from './owned-sandbox.ts';
import { MetricsQuery, SandboxParams } from './schemas.ts';

/** How long CPU use is measured over: long enough for /proc's 10 ms ticks to say something, short for an answer. */
const CPU_WINDOW_MS = 500;
/** How far a window's `end` may lie behind now and still hold the sample (the SDK rounds it; the request takes time). */
const END_SLACK_SECONDS = 60;
/** How long `df` may take before the disk figures are given up (then 0). */
const DF_TIMEOUT_MS = 5000;

/** Bytes used and in total on the guest's root filesystem, or zeros when `df` did not answer. */
async function rootDiskOf(agent: GuestAgent): Promise<{ used: number; total: number }> {
  const chunks: Buffer[] = [];
  const result = await agent
    .exec({ argv: ['df', '-B1', '--output=used,size', '/'], timeoutMs: DF_TIMEOUT_MS }, { onStdout: (chunk) => chunks.push(chunk), onStderr: () => {} })
    .catch(() => null);
  const figures = Buffer.concat(chunks).toString('utf8').trim().split('\n')[1]?.trim().split(/\s+/).map(Number);
  if (!result || result.exitCode !== 0 || !figures || figures.length !== 2 || figures.some((n) => !Number.isFinite(n))) return { used: 0, total: 0 };
  return { used: figures[0]!, total: figures[1]! };
}

/** One E2B metric sample of a running VM's guest. */
async function sampleOf(agent: GuestAgent, at: () => Date) {
  const first = await agent.usage();
  await new Promise((resolve) => setTimeout(resolve, CPU_WINDOW_MS));
  const [second, disk] = await Promise.all([agent.usage(), rootDiskOf(agent)]);
  const elapsedSeconds = (second.uptimeSeconds - first.uptimeSeconds) * second.cpu.count;
  const busySeconds = second.cpu.busySeconds - first.cpu.busySeconds;
  const cpuUsedPct = elapsedSeconds > 0 ? Math.min(100, Math.max(0, (busySeconds / elapsedSeconds) * 100)) : 0;
  const timestamp = at();
  return {
    timestamp: timestamp.toISOString(),
    timestampUnix: Math.floor(timestamp.getTime() / 1000),
    cpuCount: second.cpu.count,
    cpuUsedPct: Math.round(cpuUsedPct * 100) / 100,
    memUsed: second.memory.usedBytes,
    memTotal: second.memory.totalBytes,
    diskUsed: disk.used,
    diskTotal: disk.total,
  };
}

export function registerSandboxMetrics(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/sandboxes/:sandboxID/metrics',
    { schema: { hide: true, params: SandboxParams, querystring: MetricsQuery }, onRequest: requireAuth },
    async (request) => {
      const { vm, state } = await ownedSandbox(services, principalOf(request), request.params.sandboxID);
      const nowSeconds = Math.floor(services.clock.now().getTime() / 1000);
      const { start, end } = request.query;
      if (state !== 'running' || (start !== undefined && start > nowSeconds) || (end !== undefined && end + END_SLACK_SECONDS < nowSeconds)) return [];
      const agent = services.sandbox.vms.agentOf(vm);
      if (!agent) return [];
      return [await sampleOf(agent, () => services.clock.now())];
    },
  );
}
