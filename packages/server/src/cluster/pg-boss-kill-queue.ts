/**
 * The kill queue (core/cluster/kill-queue.ts) on pg-boss: kills of VMs on other nodes, as the spec has them,
 * dispatched to the owning node's queue, not proxied. The queue is pg-boss on the cluster's PostgreSQL (one queue per node, `kill.<node id>`); each node works its own
 * queue. A worker that picks up a kill for a VM it does not run (the job was sent to the wrong queue, or the VM's
 * row moved) drops it as stale, or with `SANDBOXD_STRICT_KILL_OWNERSHIP` re-dispatches it once to the
 * authoritative owner (from the VM's row); a re-dispatched job is never re-dispatched again. A job's output says
 * what became of it (`killed`, `already_ended`, `redispatched`, `stale`).
 *
 * Only in cluster mode (a PostgreSQL store): with the embedded store there is one node and kills are local.
 */
import type { FastifyBaseLogger } from 'fastify';
import PgBoss from 'pg-boss';
import type { KillJob, KillQueue } from '../core/cluster/kill-queue.ts';
import type { Ownership } from '../core/cluster/ownership.ts';
import { AppError } from '../core/errors.ts';
import type { Database } from '../store/database.ts';
import { findVm } from '../store/vms-store.ts';

export type KillOutcome = { outcome: 'killed' | 'already_ended' | 'stale' } | { outcome: 'redispatched'; to: string };

export const killQueueOf = (nodeId: string) => `kill.${nodeId}`;

export interface KillQueueOptions {
  connectionString: string;
  /** This node: its own queue is the one it works. */
  ownership: Ownership;
  strictOwnership: boolean;
  /** Kills a VM this node runs and records its end (VmService). */
  killLocal(vmId: string): Promise<void>;
}

/** A worker of the app (started after the node registered, stopped before the store closes). */
export class PgBossKillQueue implements KillQueue {
  private boss: PgBoss | null = null;
  private readonly queues = new Set<string>();

  constructor(
    private readonly database: Database,
    private readonly options: KillQueueOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  async start(): Promise<void> {
    // pg-boss keeps its tables in a schema of its own; its maintenance (expiry, archive) runs on every node and
    // coordinates itself through the database.
    const boss = new PgBoss({ connectionString: this.options.connectionString, schema: 'pgboss', max: 4 });
    boss.on('error', (error: Error) => this.log.error({ err: error }, 'kill queue (pg-boss) error'));
    await boss.start();
    this.boss = boss;
    const own = killQueueOf(this.options.ownership.nodeId);
    await this.ensureQueue(own);
    // Batches, because pg-boss fetches once per polling interval (one job per fetch measured 2 kills/s in
    // bench:cluster-db). Each job is completed with its own output (what became of it) before the handler
    // returns; pg-boss's completion of the batch afterwards finds them done and leaves them so.
    await boss.work<KillJob>(own, { pollingIntervalSeconds: 0.5, batchSize: 32 }, async (jobs) => {
      await Promise.all(jobs.map(async (job) => boss.complete(own, job.id, await this.handle(job.data))));
    });
  }

  async stop(): Promise<void> {
    await this.boss?.stop({ graceful: true, timeout: 10_000, wait: true });
    this.boss = null;
  }

  async dispatch(nodeId: string, job: KillJob): Promise<string> {
    if (!this.boss)
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `the kill queue of node ${this.options.ownership.nodeId} is not running (the node is starting or stopping): retry`,
      );
    const queue = killQueueOf(nodeId);
    await this.ensureQueue(queue);
    const id = await this.boss.send(queue, job, { retryLimit: 3, retryDelay: 1, expireInSeconds: 120 });
    if (!id) throw new Error(`pg-boss did not accept the kill of ${job.vmId}`);
    return id;
  }

  /** A job's state and output (tests and diagnostics). */
  async job(nodeId: string, id: string): Promise<{ state: string; output: unknown } | null> {
    const job = await this.boss?.getJobById<KillJob>(killQueueOf(nodeId), id, { includeArchive: true });
    return job ? { state: job.state, output: job.output } : null;
  }

  private async ensureQueue(name: string): Promise<void> {
    if (this.queues.has(name)) return;
    if (!(await this.boss!.getQueue(name))) await this.boss!.createQueue(name, { name });
    this.queues.add(name);
  }

  private async handle(job: KillJob): Promise<KillOutcome> {
    const vm = await findVm(this.database.db, job.vmId);
    if (!vm || vm.status === 'killed') return { outcome: 'already_ended' };
    if (this.options.ownership.isLocal(vm)) {
      await this.options.killLocal(vm.id);
      this.log.info({ vm: vm.id, from: job.from }, 'VM killed from the kill queue');
      return { outcome: 'killed' };
    }
    if (this.options.strictOwnership && !job.redispatched) {
      await this.dispatch(vm.nodeId, { ...job, redispatched: true });
      this.log.warn({ vm: vm.id, owner: vm.nodeId, from: job.from }, 'a kill for a VM of another node landed here: re-dispatched once to its owner');
      return { outcome: 'redispatched', to: vm.nodeId };
    }
    this.log.warn(
      { vm: vm.id, owner: vm.nodeId, from: job.from, redispatched: job.redispatched ?? false },
      'a kill for a VM of another node landed here: dropped as stale',
    );
    return { outcome: 'stale' };
  }
}
