/**
 * What the engine must remember about each acquired VM across a server restart: its public id and its
 * deadline. One small JSON file per driver VM, written atomically; the driver's own run directory is the
 * driver's, so these live beside it.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { VolumeMount } from '../core/vm-engine.ts';

export interface PersistedVm {
  /** The driver's id (its run directory's name). */
  driverId: string;
  /** The id users see. */
  vmId: string;
  vcpuCount: number;
  memoryMb: number;
  templateId: string;
  startedAtMs: number;
  expiresAtMs: number;
  /** Root disk quota, MiB (absent in states written before quotas existed). */
  diskMb?: number;
  /** Its volumes (absent: none): a kill flushes them first; a snapshot unmounts them for its moment, a pause keeps them. */
  volumes?: VolumeMount[];
}

export class VmStateStore {
  constructor(private readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  }

  private file(driverId: string): string {
    return path.join(this.dir, `${driverId}.json`);
  }

  write(state: PersistedVm): void {
    const target = this.file(state.driverId);
    const temp = `${target}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(state), { mode: 0o600 });
    fs.renameSync(temp, target);
  }

  /** Synchronous: the driver's recovery asks per VM whether to keep it. */
  read(driverId: string): PersistedVm | undefined {
    try {
      return JSON.parse(fs.readFileSync(this.file(driverId), 'utf8')) as PersistedVm;
    } catch {
      return undefined;
    }
  }

  remove(driverId: string): void {
    fs.rmSync(this.file(driverId), { force: true });
  }

  /** Removes the state of every VM not in `live` (left by VMs that ended while the server was down). */
  prune(live: Set<string>): void {
    for (const name of fs.readdirSync(this.dir)) {
      if (!/\.json(\.tmp)?$/.test(name)) continue;
      const driverId = name.replace(/\.json(\.tmp)?$/, '');
      if (!live.has(driverId)) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }
}
