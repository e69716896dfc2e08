/**
 * How VMs end: an end is carried out (pre-stop hook, engine kill) and recorded (the row `killed` with its reason,
 * the VM's in-flight executions ended, the event of that end) in one transaction. Ends under way are tracked by
 * VM, so a request that finds such a VM no longer live waits for its record instead of starting a second VM
 * beside one that is still recorded live.
 */
import { endCauseOf, LIVE_VM_STATUSES, type Vm, type VmEndReason, type VmStatus } from '../../model.ts';
import { transitionVm } from '../../store/vms-store.ts';
import { publishVolumes } from './volume-transfer.ts';
import type { EventPayload, EventType } from '../event-catalogue.ts';
import { recordEvent } from '../events.ts';
import { endedExecutionError, endInFlightExecutions } from '../execution-ends.ts';
import type { PreStopHooks } from './pre-stop.ts';
import type { VmServiceDeps } from './types.ts';
import type { Executor } from '../../store/database.ts';

/** The ends recorded here (a VM that never started ends as `failed` in its acquisition). */
export type RecordedEndReason = Exclude<VmEndReason, 'failed'>;

/** The "a VM ended" events whose `detail` may be `R`. */
type EndEventFor<R extends RecordedEndReason> = {
  [T in EventType]: T extends `vm.${string}` ? (EventPayload<T> extends { detail: infer D } ? (R extends D ? T : never) : never) : never;
}[EventType];

/** The event each end is recorded with (its payload: the documented cause as `reason`, the end itself as `detail`). */
const END_EVENTS: { [R in RecordedEndReason]: EndEventFor<R> } = {
  killed: 'vm.killed',
  server_restart: 'vm.killed',
  server_shutdown: 'vm.killed',
  expired: 'vm.expired',
  crashed: 'vm.crashed',
  agent_lost: 'vm.agent_lost',
  node_lost: 'vm.lost',
};

export class VmEnds {
  /** Ends being carried out or recorded (engine reports, kills), by VM. */
  private readonly ending = new Map<string, Promise<unknown>>();

  constructor(
    private readonly deps: VmServiceDeps,
    private readonly preStop: PreStopHooks,
  ) {}

  /** Resolves once the end under way for `vmId` (if any) is recorded; never rejects. */
  async settled(vmId: string): Promise<boolean> {
    const under = this.ending.get(vmId);
    if (!under) return false;
    await under.catch(() => {});
    return true;
  }

  /**
   * Kills a VM of this node and records its end (see `record`), registered as under way from the moment the kill
   * starts. With `vm` (a stop that was asked for: a kill, the end of its lifetime) its pre-stop hook runs first.
   * An end already under way is joined, not repeated (answers undefined, like an end recorded by another).
   */
  async end(vmId: string, reason: RecordedEndReason, vm?: Vm): Promise<Vm | undefined> {
    // Checked and registered in one step (no await between), so two concurrent ends make one.
    const under = this.ending.get(vmId);
    if (under) {
      await under.catch(() => {});
      return undefined;
    }
    return this.track(
      vmId,
      (async () => {
        if (vm) await this.preStop.run(vm, reason === 'expired' ? 'lifetime' : 'user_kill');
        await this.deps.engine.kill(vmId);
        await publishVolumes(this.deps, vmId);
        return this.record(vmId, reason);
      })(),
    );
  }

  /** Records an end the engine reports (it let go of the VM already). */
  reported(vmId: string, reason: RecordedEndReason): Promise<Vm | undefined> {
    return this.track(
      vmId,
      (async () => {
        await publishVolumes(this.deps, vmId);
        return this.record(vmId, reason);
      })(),
    );
  }

  /**
   * Marks a VM in one of `from` (default: live) killed with `reason` and records the event of that end; a VM
   * already ended is left alone (answers undefined). `first`: what else the end records, in the same transaction,
   * before the event of the end (the retention loop's `vm.pause_expired`).
   */
  async record(
    vmId: string,
    reason: RecordedEndReason,
    from: readonly VmStatus[] = LIVE_VM_STATUSES,
    first?: (trx: Executor) => Promise<unknown>,
  ): Promise<Vm | undefined> {
    const { database, clock, notifier } = this.deps;
    const at = clock.now().toISOString();
    const row = await database.db.transaction().execute(async (trx) => {
      const ended = await transitionVm(trx, vmId, from, { status: 'killed', endReason: reason, endedAt: at, pausedAt: null, remainingSeconds: null });
      if (!ended) return undefined;
      if (first) await first(trx);
      await endInFlightExecutions(trx, clock, { vmId }, endedExecutionError(reason));
      // The table pairs each end with an event whose payload takes it; the payload is the same for all of them.
      const data = { vm_id: vmId, session_id: ended.sessionId, ended_at: at, reason: endCauseOf(reason), detail: reason } as EventPayload<
        (typeof END_EVENTS)[RecordedEndReason]
      >;
      await recordEvent(trx, clock, { type: END_EVENTS[reason], userId: ended.userId, subjectId: vmId, data });
      return ended;
    });
    if (row) notifier.committed();
    return row;
  }

  /** Registers an end under way for `vmId` and passes it on. */
  private track<T>(vmId: string, work: Promise<T>): Promise<T> {
    this.ending.set(vmId, work);
    const settled = () => {
      if (this.ending.get(vmId) === work) this.ending.delete(vmId);
    };
    work.then(settled, settled);
    return work;
  }
}
