/** Persistent volumes: ext4 filesystems on the server's disk that outlive VMs (mount them with `vms.create`). */
import type { VolumeRecord } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { offsetPages, type PagedList } from '../pagination.ts';

/** The size is `sizeGb` GiB or `sizeMb` MiB: give exactly one. */
export type VolumeCreateOptions = { name: string } & ({ sizeGb: number; sizeMb?: undefined } | { sizeMb: number; sizeGb?: undefined });

export class Volumes {
  constructor(private readonly transport: Transport) {}

  create(options: VolumeCreateOptions & CallOptions): Promise<VolumeRecord> {
    return this.transport.call('/v1/volumes', 'post', {
      json: { name: options.name, ...(options.sizeGb !== undefined ? { size_gb: options.sizeGb } : { size_mb: options.sizeMb }) },
      signal: options.signal,
    });
  }

  /** Your volumes, newest first, each with the VMs that have it mounted. */
  list(options: { limit?: number; offset?: number } & CallOptions = {}): PagedList<VolumeRecord> {
    return offsetPages(options, (query) => this.transport.call('/v1/volumes', 'get', { query, signal: options.signal }));
  }

  get(volumeId: string, options: CallOptions = {}): Promise<VolumeRecord> {
    return this.transport.call('/v1/volumes/{volume_id}', 'get', { params: { volume_id: volumeId }, signal: options.signal });
  }

  /** Deletes the volume and its data (a 409 while a VM has it mounted). */
  async delete(volumeId: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/volumes/{volume_id}', 'delete', { params: { volume_id: volumeId }, signal: options.signal });
  }
}
