/**
 * A cold-booted VM of a built-in image flavour, straight from the QEMU driver (no server, no snapshot): the
 * yardstick that the benchmarks put beside a restore, and a scratch VM to run measurements in.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { AgentClient } from '../packages/server/src/agent/index.ts';
import { AGENT_BUNDLE_PATH } from '../packages/server/src/engine/index.ts';
import { defaultCacheDir, ensureGuestImage } from '../packages/server/src/image/index.ts';
import type { ImageFlavour } from '../packages/server/src/image/types.ts';
import { agentClientHandoff } from '../packages/server/src/vm/agent-client-probe.ts';
import { QemuDriver } from '../packages/server/src/vm/qemu/qemu-driver.ts';
import { VCPU_COUNTS } from '../packages/server/src/vm/vm-driver.ts';

export interface ColdVm {
  agent: AgentClient;
  /** From QEMU's start until the guest's agent answered. */
  bootMs: number;
  /** Runs a command in the guest; rejects (with its output) unless it exits 0. */
  run(argv: string[], timeoutMs?: number): Promise<{ stdout: string; stderr: string; ms: number }>;
  close(): Promise<void>;
}

/** Builds (or takes from the cache) the flavour's image and cold-boots one VM of it, without a network. */
export async function bootColdVm(
  flavour: ImageFlavour,
  shape: { vcpuCount: number; memoryMb: number },
  onProgress?: (message: string) => void,
): Promise<ColdVm> {
  const image = await ensureGuestImage({
    cacheDir: defaultCacheDir(),
    agentBundlePath: AGENT_BUNDLE_PATH,
    flavour,
    onProgress: (event) => {
      if (event.type === 'stage-start') onProgress?.(`${flavour.name} image: ${event.stage}`);
    },
  });
  const driver = new QemuDriver<AgentClient>({ accelerator: 'auto', agentProbe: agentClientHandoff() });
  await driver.prepare(image);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sbx-bench-cold-'));
  fs.chmodSync(root, 0o755); // QEMU runs as its own user and must reach the run directory
  const vmId = `bench-cold-${randomBytes(3).toString('hex')}`;
  // QEMU VMs come in the driver's vCPU sizes: the smallest that holds the shape's count, as the engine does.
  const vcpuCount = VCPU_COUNTS.find((count) => count >= shape.vcpuCount) ?? VCPU_COUNTS[VCPU_COUNTS.length - 1]!;
  const start = performance.now();
  const vm = await driver.boot({ vmId, runDir: path.join(root, vmId), image, vcpuCount, memoryMb: shape.memoryMb, network: 'none', timeoutMs: 300_000 });
  const bootMs = performance.now() - start;
  return {
    agent: vm.agent,
    bootMs,
    async run(argv, timeoutMs = 600_000) {
      const t = performance.now();
      const { result, stdout, stderr } = await vm.agent.exec({ argv, env: {}, cwd: '/', timeoutMs }).collect();
      if (result.exitCode !== 0) throw new Error(`${argv.join(' ')} ended with ${result.exitCode ?? result.signal}: ${stderr.toString().slice(-2000)}`);
      return { stdout: stdout.toString(), stderr: stderr.toString(), ms: performance.now() - t };
    },
    async close() {
      await vm.agent.close().catch(() => {});
      await driver.kill(vmId);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
