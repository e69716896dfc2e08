/** Snapshots of your VMs: list, get, delete (start VMs from them with `vms.create({ snapshot })` or `vms.clone`). */
import type { SnapshotRecord } from '../api-types.ts';
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

  /** Deletes the snapshot and its files; refused (409) while a VM or another snapshot builds on it. */
  delete(snapshotId: string, options: CallOptions = {}) {
    return this.transport.call('/v1/snapshots/{snapshot_id}', 'delete', { params: { snapshot_id: snapshotId }, signal: options.signal });
  }
}
