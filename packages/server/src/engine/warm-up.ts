/**
 * Warming a restored VM before the warm pool hands it out. Under TCG a QEMU process translates guest code the
 * first time it runs it, and every restore is a new QEMU process with an empty translation cache: a session's
 * first `print(1)` or `echo 1` paid ~300-600 ms for code that runs in ~25-110 ms once translated. So a pooled VM
 * runs the paths a first request takes — the agent's exec route with a bash command, a Python cell in the spare
 * interpreter that the session's first run will take (in a scratch namespace, so its state stays pristine), and
 * a small file written, read and removed — before anyone waits for it. Under KVM this costs a few milliseconds.
 */
import type { AgentClient } from '../agent/index.ts';

/** Where the warm-up's file goes: the guest's /tmp (tmpfs), not the user's disk. */
const WARM_UP_FILE = '/tmp/.sandboxd-warm-up';
const STEP_TIMEOUT_MS = 30_000;

export interface WarmUpReport {
  execMs: number;
  /** Null when the agent has no spare interpreter (or cannot run in it). */
  pythonMs: number | null;
  fileMs: number;
  /** A template's own warm-up (`WarmPoolRequest.warmUp`), which replaces the steps above. */
  templateMs?: number;
}

/**
 * Runs the warm-up; rejects when a step fails (the VM is then not fit to hand out). The exec is shaped like a
 * bash execution of `ExecutionService` (`bash -c`, cwd /root), the Python cell like a first cell.
 */
export async function warmUp(client: AgentClient): Promise<WarmUpReport> {
  let started = performance.now();
  const exec = await client.exec({ command: 'echo warm', shell: ['/bin/bash', '-c'], env: {}, cwd: '/root', timeoutMs: STEP_TIMEOUT_MS }).collect();
  if (exec.result.exitCode !== 0)
    throw new Error(`warm-up exec ended with ${exec.result.exitCode ?? exec.result.signal}: ${exec.stderr.toString().slice(0, 200)}`);
  const execMs = performance.now() - started;

  let pythonMs: number | null = null;
  if (client.agent.capabilities.includes('python-spare')) {
    started = performance.now();
    const cell = await client.runPython({ contextId: 'warm-up', code: 'print(1)', timeoutMs: STEP_TIMEOUT_MS, spare: true }).catch(() => null);
    if (cell && cell.error) throw new Error(`warm-up Python cell failed: ${cell.error.name}: ${cell.error.value}`);
    if (cell) pythonMs = performance.now() - started;
  }

  started = performance.now();
  await client.writeFile(WARM_UP_FILE, Buffer.from('warm\n'), { timeoutMs: STEP_TIMEOUT_MS });
  await client.readFileBytes(WARM_UP_FILE, { timeoutMs: STEP_TIMEOUT_MS });
  await client.remove(WARM_UP_FILE, { timeoutMs: STEP_TIMEOUT_MS });
  return { execMs, pythonMs, fileMs: performance.now() - started };
}
