/**
 * The VM service's start: the engine starts once, and after a restart the store is reconciled with what the engine
 * re-adopted (VMs recorded live that did not survive are recorded ended; snapshots still being taken are dropped)
 * before anything may treat a VM of this node as gone.
 */
import { deleteSnapshotRow, listCreatingSnapshotsOfNode } from '../../store/snapshots-store.ts';
import { listLiveVmsOfNode } from '../../store/vms-store.ts';
import { AppError } from '../errors.ts';
import type { VmEnds } from './ends.ts';
import type { VmServiceDeps } from './types.ts';

/** What a start found: VMs re-adopted, and VMs recorded ended because they did not survive. */
export interface StartCounts {
  adopted: number;
  ended: number;
}

export class VmRecovery {
  private started: Promise<StartCounts> | undefined;
  /** The store reconciled with what the engine re-adopted after a restart (see `reconciled`). */
  private reconciling: Promise<StartCounts> | undefined;
  /** Set once a reconciliation succeeded: from then on no row read can be undone by it. */
  private reconciledOnce = false;

  constructor(
    private readonly deps: VmServiceDeps,
    private readonly ends: VmEnds,
  ) {}

  /** Starts the engine and reconciles the store with it; once (a failure lets the next call retry). */
  start(): Promise<StartCounts> {
    this.started ??= Promise.all([this.deps.engine.start(), this.reconciled()]).then(([, counts]) => counts);
    this.started.catch(() => {
      this.started = undefined;
    });
    return this.started;
  }

  /** Whether the reconciliation is over (rows read before it may have been changed by it). */
  get isReconciled(): boolean {
    return this.reconciledOnce;
  }

  /** Starts the engine (once) and reconciles the store with it; a failure is the caller's 503. */
  async ensureStarted(): Promise<void> {
    await engineAnswer(this.start());
  }

  /**
   * Resolves once the engine re-adopted what an earlier process left and the store agrees with it. Until then a
   * VM recorded live on this node may still come back, so nothing may treat it as gone (an execute_async answered
   * before the engine was up once recorded a VM about to be re-adopted as crashed). A failure is a 503.
   */
  async ensureReconciled(): Promise<void> {
    await engineAnswer(this.reconciled());
  }

  private reconciled(): Promise<StartCounts> {
    this.reconciling ??= this.deps.engine.recovered().then(async () => {
      await this.dropUnfinishedSnapshots();
      const counts = await this.reconcile();
      this.reconciledOnce = true;
      return counts;
    });
    this.reconciling.catch(() => {
      this.reconciling = undefined;
    });
    return this.reconciling;
  }

  /** After a restart: VMs the store thinks are live on this node but the engine does not have are over. */
  private async reconcile(): Promise<StartCounts> {
    const { database, engine, clock } = this.deps;
    const live = new Set(engine.liveVmIds());
    const rows = await listLiveVmsOfNode(database.db, engine.nodeId);
    let ended = 0;
    for (const row of rows) {
      if (live.has(row.id) && row.status === 'active') continue;
      // Handed out by the engine but never recorded active: the acquisition that wanted it is gone.
      if (live.has(row.id)) await engine.kill(row.id);
      const expired = Date.parse(row.expiresAt) <= clock.now().getTime();
      await this.ends.record(row.id, expired ? 'expired' : 'server_restart');
      ended += 1;
    }
    // Engine VMs the store does not know as live (e.g. a crash between spawn and commit) must not linger.
    const known = new Set(rows.map((r) => r.id));
    for (const id of live) if (!known.has(id)) await engine.kill(id);
    return { adopted: rows.length - ended, ended };
  }

  /**
   * Snapshots this node was still taking are over (nothing completes them); their files and rows go. Their VMs
   * ran on: a failed live capture leaves the VM as it was.
   */
  private async dropUnfinishedSnapshots(): Promise<void> {
    const { database, engine } = this.deps;
    for (const snapshot of await listCreatingSnapshotsOfNode(database.db, engine.nodeId)) {
      await engine.deleteSnapshot(snapshot.id);
      await deleteSnapshotRow(database.db, snapshot.id);
    }
  }
}

/** The engine's start as the API answers its failure (503). */
async function engineAnswer(started: Promise<unknown>): Promise<void> {
  try {
    await started;
  } catch (error) {
    throw new AppError('VM_UNAVAILABLE', `the VM engine could not start: ${(error as Error).message}`);
  }
}
