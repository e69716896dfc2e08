/**
 * The port kills of other nodes' VMs go through (the spec has them dispatched to the owning node, not proxied):
 * a durable queue per node that its owner works (cluster/pg-boss-kill-queue.ts, pg-boss on the cluster's
 * PostgreSQL). Only in cluster mode: with the embedded store there is one node and kills are local.
 */

/** One kill, as it waits in the owner's queue. */
export interface KillJob {
  vmId: string;
  /** Set on the one re-dispatch a strict worker makes. */
  redispatched?: boolean;
  /** The node that dispatched it (for the log). */
  from: string;
}

export interface KillQueue {
  /** Puts a kill of `job.vmId` on node `nodeId`'s queue; answers the job id. */
  dispatch(nodeId: string, job: KillJob): Promise<string>;
}
