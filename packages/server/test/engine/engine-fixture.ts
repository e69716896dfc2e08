// test-lane: heavy (a real engine: QEMU VMs and snapshots): scripts/run-tests.mjs runs what imports this one at a time.
/** A real SandboxEngine (QEMU, the cached guest image and snapshots) on private data and run directories. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { engineOptions, loadConfig, type Config, type ConfigOverrides } from '../../src/config/index.ts';
import { createEngine } from '../../src/engine/index.ts';
import type { SandboxEngine } from '../../src/engine/sandbox-engine.ts';

export function engineConfig(dataDir: string, overrides: ConfigOverrides = {}): Config {
  // Without root there is no network guard: VMs start unguarded there (as root the guard is required).
  return loadConfig(
    {},
    { dataDir, logLevel: 'silent', warmVcpus: [1], poolSize: 0, ...(process.getuid?.() !== 0 ? { vmNetworkUnguarded: true } : {}), ...overrides },
  );
}

export function newDataDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-engine-'));
}

export function startEngine(config: Config): SandboxEngine {
  return createEngine(engineOptions(config), pino({ level: 'silent' }));
}

/** Runs a shell command in a VM and returns its stdout (stderr appended on failure). */
export async function sh(engine: SandboxEngine, vmId: string, command: string): Promise<string> {
  const agent = engine.agent(vmId);
  if (!agent) throw new Error(`VM ${vmId} is not live`);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const result = await agent.exec({ command, shell: ['/bin/bash', '-c'], timeoutMs: 120_000 }, { onStdout: (c) => out.push(c), onStderr: (c) => err.push(c) });
  if (result.exitCode !== 0) throw new Error(`${command}: exit ${result.exitCode}: ${Buffer.concat(err).toString()}`);
  return Buffer.concat(out).toString();
}

/** QEMU processes whose command line names `driverIdOrRunDir`. */
export function qemuProcessesMatching(text: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((pid) => {
      try {
        const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmdline.startsWith('qemu-system') && cmdline.includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}
