/**
 * Python contexts: one persistent interpreter per context id, plus one pre-started spare. Interpreter start-up
 * costs about a second under TCG; the spare is started at agent boot, so it is already running inside a
 * snapshot and the first run in a restored clone skips that cost.
 */
import { AgentFailure } from '../http/agent-failure.ts';
import type { PythonRunResult } from '../protocol/messages.ts';
import { PythonKernel, type KernelRunOptions, type PythonKernelOptions } from './python-kernel.ts';

/** Options of a {@link KernelPool}. */
export interface KernelPoolOptions extends PythonKernelOptions {
  /** Keep one interpreter started ahead of need. */
  prestart: boolean;
  /** Most live contexts; beyond it a run fails with UNAVAILABLE (each interpreter holds ~10 MB). */
  maxContexts: number;
}

/** Context id → interpreter. */
export class KernelPool {
  private readonly contexts = new Map<string, PythonKernel>();
  private spare: PythonKernel | undefined;

  constructor(private readonly options: KernelPoolOptions) {}

  /** Starts the spare interpreter (when enabled). */
  start(): void {
    if (this.options.prestart) this.replenish();
  }

  /**
   * Runs code in a context, creating its interpreter on first use (which then starts in `cwd`, when given);
   * `signal` interrupts it.
   */
  async run(
    contextId: string,
    code: string,
    options: Pick<KernelRunOptions, 'timeoutMs' | 'signal' | 'cwd' | 'onStdout' | 'onStderr'> = {},
  ): Promise<PythonRunResult> {
    const { timeoutMs, signal, cwd, onStdout, onStderr } = options;
    let kernel = this.contexts.get(contextId);
    let fresh = false;
    if (!kernel?.alive) {
      if (!kernel && this.contexts.size >= this.options.maxContexts) {
        throw new AgentFailure('UNAVAILABLE', `too many Python contexts (${this.options.maxContexts}); reset one first`);
      }
      kernel = this.takeSpare() ?? new PythonKernel(this.options);
      this.contexts.set(contextId, kernel);
      fresh = true;
    }
    try {
      await kernel.ready;
    } catch (error) {
      if (this.contexts.get(contextId) === kernel) this.contexts.delete(contextId);
      throw new AgentFailure('UNAVAILABLE', (error as Error).message);
    }
    const result = await kernel.run(code, {
      timeoutMs,
      signal,
      ...(fresh && cwd ? { cwd } : {}),
      ...(onStdout ? { onStdout } : {}),
      ...(onStderr ? { onStderr } : {}),
    });
    if (!kernel.alive && this.contexts.get(contextId) === kernel) this.contexts.delete(contextId);
    // Start the next spare only now: starting it alongside the first run would slow that run down.
    if (fresh && this.options.prestart && !this.spare) this.replenish();
    return result;
  }

  /**
   * Runs `code` in the spare interpreter's scratch namespace and leaves the spare unassigned, its state as it
   * was: the host warms a VM this way before handing it out, so that the interpreter a session's first run
   * takes has already run the kernel's code paths in this VM (under TCG each QEMU process translates guest
   * code on its first execution: ~300 ms of a first `print(1)`). Null when there is no spare.
   */
  async warmSpare(code: string, timeoutMs?: number): Promise<PythonRunResult | null> {
    const spare = this.spare;
    if (!spare?.alive) return null;
    try {
      await spare.ready;
    } catch {
      return null;
    }
    return spare.run(code, { timeoutMs, scratch: true });
  }

  /** Ends a context's interpreter; false if there was none. */
  reset(contextId: string): boolean {
    const kernel = this.contexts.get(contextId);
    if (!kernel) return false;
    this.contexts.delete(contextId);
    kernel.kill();
    return true;
  }

  /**
   * Queues a reseed of every live interpreter's random state, ahead of any run asked for later (each
   * interpreter runs its queue in order), so no code can draw from the shared pre-snapshot state. Does not wait
   * for the reseeds themselves. Returns how many interpreters were queued.
   */
  reseedAll(): number {
    const kernels = [...this.contexts.values(), ...(this.spare ? [this.spare] : [])].filter((kernel) => kernel.alive);
    for (const kernel of kernels) void kernel.reseed().catch(() => undefined);
    return kernels.length;
  }

  /** Waits until the spare interpreter is up; false if there is none or it failed. */
  async spareReady(waitMs: number): Promise<boolean> {
    const spare = this.spare;
    if (!spare) return false;
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), waitMs).unref());
    return Promise.race([
      spare.ready.then(
        () => spare.alive,
        () => false,
      ),
      timeout,
    ]);
  }

  /** Kills every interpreter. */
  close(): void {
    for (const kernel of this.contexts.values()) kernel.kill();
    this.contexts.clear();
    this.spare?.kill();
    this.spare = undefined;
  }

  private takeSpare(): PythonKernel | undefined {
    const spare = this.spare;
    this.spare = undefined;
    if (!spare?.alive) return undefined;
    spare.setBackground(false);
    return spare;
  }

  private replenish(): void {
    const kernel = new PythonKernel(this.options);
    // Starting an interpreter costs about a second of CPU under TCG: in the background it must not slow down
    // the runs of the context whose first run asked for it (measured: 1+1 took 40-70 ms instead of ~25 ms
    // while a spare started at normal priority on the guest's one vCPU).
    kernel.setBackground(true);
    this.spare = kernel;
    kernel.ready.catch(() => {
      if (this.spare === kernel) this.spare = undefined;
    });
  }
}
