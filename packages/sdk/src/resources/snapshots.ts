/** Snapshots of your VMs: list, get, delete, clone (fork one into up to 100 VMs; start one VM from it with `vms.create({ snapshot })`). */
import type { CloneResult, SnapshotRecord } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { offsetPages, type PagedList } from '../pagination.ts';

export class Snapshots {
  constructor(private readonly transport: Transport) {}

  /** Your snapshots, newest first. */
  list(options: { limit?: number; offset?: number } & CallOptions = {}): PagedList<SnapshotRecord> {
    return offsetPages(options, (query) => this.transport.call('/v1/snapshots', 'get', { query, signal: options.signal }));
  }

  get(snapshotId: string, options: CallOptions = {}): Promise<SnapshotRecord> {
    return this.transport.call('/v1/snapshots/{snapshot_id}', 'get', { params: { snapshot_id: snapshotId }, signal: options.signal });
  }

  /**
   * Forks your snapshot (its id or its name) into `count` new VMs (1 to 100, default 1; your plan may allow fewer in
   * one request), each in a session of its own. All or nothing: if one cannot start, none is left.
   */
  clone(snapshot: string, options: { count?: number } & CallOptions = {}): Promise<CloneResult> {
    return this.transport.call('/v1/snapshots/{snapshot_id}/clone', 'post', {
      params: { snapshot_id: snapshot },
      json: options.count !== undefined ? { count: options.count } : {},
      signal: options.signal,
    });
  }

  /** Deletes the snapshot and its files; refused (409) while a VM or another snapshot builds on it. */
  delete(snapshotId: string, options: CallOptions = {}) {
    return this.transport.call('/v1/snapshots/{snapshot_id}', 'delete', { params: { snapshot_id: snapshotId }, signal: options.signal });
  }
}
