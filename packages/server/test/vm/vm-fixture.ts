// test-lane: heavy (boots QEMU VMs): scripts/run-tests.mjs runs what imports this one at a time.
/**
 * Shared set-up of the VM tests: the real guest image (built or taken from the cache) with the real agent,
 * a QemuDriver whose events are recorded, scratch directories that QEMU's user can reach, and a shell in a
 * guest through the agent.
 */
import { existsSync } from 'node:fs';
import { chmod, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentClient } from '../../src/agent/index.ts';
import { defaultCacheDir, ensureGuestImage, type GuestImage } from '../../src/image/index.ts';
import { agentClientProbe } from '../../src/vm/agent-client-probe.ts';
import { processStartTime } from '../../src/vm/qemu/process.ts';
import { QemuDriver, type QemuDriverOptions } from '../../src/vm/qemu/qemu-driver.ts';
import type { VmExitEvent, VmStageEvent, VmWarningEvent } from '../../src/vm/vm-driver.ts';

export const AGENT_BUNDLE = fileURLToPath(new URL('../../../agent/dist/agent.mjs', import.meta.url));

/** The guest image every VM test boots. */
export async function testImage(): Promise<GuestImage> {
  if (!existsSync(AGENT_BUNDLE)) throw new Error(`no agent bundle at ${AGENT_BUNDLE}: run npm run bundle -w @sandboxd/agent`);
  return ensureGuestImage({ cacheDir: defaultCacheDir(), agentBundlePath: AGENT_BUNDLE });
}

/** A driver plus everything it emitted. */
export interface RecordingDriver {
  driver: QemuDriver;
  stages: VmStageEvent[];
  exits: VmExitEvent[];
  warnings: VmWarningEvent[];
  /** Resolves with the next exit event of `vmId` (or one already seen). */
  exitOf(vmId: string, timeoutMs?: number): Promise<VmExitEvent>;
}

export function createDriver(options: Partial<QemuDriverOptions> = {}): RecordingDriver {
  // Without root there is no network guard (QEMU runs as the test's user): VMs start unguarded there.
  const unguarded: Partial<QemuDriverOptions> = process.getuid?.() !== 0 ? { networkGuard: { required: false } } : {};
  const driver = new QemuDriver({ accelerator: 'auto', agentProbe: agentClientProbe(), ...unguarded, ...options });
  const recorded: RecordingDriver = {
    driver,
    stages: [],
    exits: [],
    warnings: [],
    exitOf(vmId, timeoutMs = 30_000) {
      const seen = recorded.exits.find((exit) => exit.vmId === vmId);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no exit event for ${vmId} within ${timeoutMs} ms`)), timeoutMs);
        const onExit = (exit: VmExitEvent) => {
          if (exit.vmId !== vmId) return;
          clearTimeout(timer);
          driver.events.off('exit', onExit);
          resolve(exit);
        };
        driver.events.on('exit', onExit);
      });
    },
  };
  driver.events.on('stage', (event) => recorded.stages.push(event));
  driver.events.on('exit', (event) => recorded.exits.push(event));
  driver.events.on('warning', (event) => recorded.warnings.push(event));
  return recorded;
}

/** A scratch directory QEMU's unprivileged user may traverse (run roots and snapshots live here). */
export async function scratchDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  await chmod(dir, 0o755);
  return dir;
}

/** Runs a shell command in the guest; resolves with its exit code and combined output. */
export async function guestShell(agentSocketPath: string, command: string, timeoutMs = 60_000): Promise<{ exitCode: number | null; output: string }> {
  const client = await AgentClient.connect({ socketPath: agentSocketPath }, { timeoutMs: 30_000 });
  try {
    const { stdout, stderr, result } = await client.exec({ command, timeoutMs }).collect();
    return { exitCode: result.exitCode, output: stdout.toString() + stderr.toString() };
  } finally {
    await client.close();
  }
}

/** True while a process with this pid exists and is not a zombie. */
export async function processAlive(pid: number): Promise<boolean> {
  return (await processStartTime(pid)) !== undefined;
}
