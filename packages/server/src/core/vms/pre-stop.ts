/**
 * Pre-stop lifecycle hooks: before a stop someone asked for (a kill, a pause, the end of the lifetime) the VM's
 * `lifecycle_hooks.pre_stop` command runs in it, through the runner the execution service sets (so each run is an
 * execution record). One run per stop: a second stop while one runs waits for it.
 */
import type { PreStopTrigger, Vm } from '../../model.ts';
import type { GuestAgent } from '../vm-engine.ts';
import type { PreStopRunner } from './types.ts';

export class PreStopHooks {
  /** Hooks running, by VM. */
  private readonly running = new Map<string, Promise<void>>();
  private runner: PreStopRunner | null = null;

  /** `agentOf`: the VM's live agent wherever it runs, or null (nothing runs then). */
  constructor(private readonly agentOf: (vm: Vm) => GuestAgent | null) {}

  /** Who runs the hooks (the execution service); until set, none run. */
  setRunner(runner: PreStopRunner): void {
    this.runner = runner;
  }

  /**
   * Runs the VM's pre-stop hook, if it has one and its agent is here to run it, before the stop `stop`: once
   * per stop, a concurrent stop of the same VM waits for the same run. Resolves when the hook ended or timed out
   * (the runner bounds it); never rejects, so the stop always goes on.
   */
  run(vm: Vm, stop: PreStopTrigger): Promise<void> {
    const hook = vm.lifecycleHooks?.preStop;
    if (!hook || !this.runner) return Promise.resolve();
    const running = this.running.get(vm.id);
    if (running) return running;
    const agent = this.agentOf(vm);
    if (!agent) return Promise.resolve();
    const work = this.runner(vm, agent, hook, stop).then(
      () => {},
      () => {},
    );
    this.running.set(vm.id, work);
    void work.then(() => this.running.delete(vm.id));
    return work;
  }
}
