/**
 * Captures: a live snapshot of a running VM (it runs on, its disk building on the snapshot from then on), a pause
 * (the same capture, after which its QEMU ends: no end is reported, the VM is merely not live here any more) and
 * the resume of a paused VM under the same id, its identity kept. The guest's file transfers are held (quiesced)
 * around each capture, since a mounted transfer share blocks the migration.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AgentClient } from '../agent/index.ts';
import { AppError } from '../core/errors.ts';
import type { AcquiredVm, CaptureOutcome, ResumeVmRequest } from '../core/vm-engine.ts';
import type { CaptureResult, VcpuCount } from '../vm/vm-driver.ts';
import type { EngineAcquisition } from './acquisition.ts';
import { assertHostStorage } from './disk-quota.ts';
import type { EngineKit } from './engine-kit.ts';
import type { Restores } from './restores.ts';
import type { PersistedVm } from './vm-state-store.ts';

/** How long a capture may keep the guest's file transfers waiting should the host not come back to thaw them. */
const CAPTURE_HOLD_MS = 120_000;

export class EngineCapture {
  constructor(
    private readonly kit: EngineKit,
    private readonly restores: Restores,
    private readonly acquisition: EngineAcquisition,
  ) {}

  async snapshot(vmId: string, snapshotId: string): Promise<CaptureOutcome> {
    const entry = await this.kit.liveEntry(vmId);
    assertNoVolumes(entry.state);
    const client = await entry.link.connected();
    // A mounted transfer share blocks the migration; transfers wait until the thaw.
    await client.quiesce({ holdMs: CAPTURE_HOLD_MS });
    try {
      await fs.promises.mkdir(path.dirname(this.restores.snapshotDir(snapshotId)), { recursive: true, mode: 0o711 });
      const result = await this.kit.options.driver.captureSnapshot({
        vmId: entry.state.driverId,
        snapshotDir: this.restores.snapshotDir(snapshotId),
        then: 'run',
      });
      // From now on the VM's disk builds on this snapshot, as its clones' will.
      return outcomeOf(result, entry.state);
    } finally {
      await client.thaw().catch(() => undefined);
    }
  }

  async deleteSnapshot(snapshotId: string): Promise<void> {
    await fs.promises.rm(this.restores.snapshotDir(snapshotId), { recursive: true, force: true });
  }

  async pause(vmId: string): Promise<CaptureOutcome> {
    const entry = await this.kit.liveEntry(vmId);
    assertNoVolumes(entry.state);
    const client = await entry.link.connected();
    await client.quiesce({ holdMs: CAPTURE_HOLD_MS });
    const dir = this.pauseDir(vmId);
    await fs.promises.rm(dir, { recursive: true, force: true });
    await fs.promises.mkdir(path.dirname(dir), { recursive: true, mode: 0o711 });
    // The link must not take QEMU's end for a dropped link (it would reconnect, then report the VM lost).
    await entry.link.close();
    let result: CaptureResult;
    try {
      result = await this.kit.options.driver.captureSnapshot({ vmId: entry.state.driverId, snapshotDir: dir, then: 'stop' });
    } catch (error) {
      // The VM runs on as before: give it a link again (its agent waits for a new host).
      const info = this.kit.options.driver.get(entry.state.driverId);
      const again = info
        ? await AgentClient.connect({ socketPath: info.agentSocketPath }, { timeoutMs: 30_000, transferDir: info.transferDir }).catch(() => undefined)
        : undefined;
      if (info && again) {
        this.kit.relink(entry.state, again, info);
        await again.thaw().catch(() => undefined);
      } else {
        this.kit.end(vmId, 'crashed');
      }
      throw error;
    }
    // Paused: no longer live here, and not ended either (no listener hears of it).
    this.kit.forget(vmId);
    return outcomeOf(result, entry.state);
  }

  async resume(request: ResumeVmRequest): Promise<AcquiredVm> {
    return this.kit.tracked(this.resumeUntracked(request));
  }

  private async resumeUntracked(request: ResumeVmRequest): Promise<AcquiredVm> {
    const started = Date.now();
    if (this.kit.closed) throw new Error('the VM engine is shutting down');
    await this.kit.start();
    await assertHostStorage(this.kit.runRoot, this.kit.options.minFreeDiskMb);
    const dir = this.pauseDir(request.vmId);
    const info = await this.kit.options.driver.readSnapshot(dir);
    if (!info) throw new AppError('NOT_FOUND', `VM ${request.vmId} has no paused state on node ${this.kit.nodeId}`);
    const vcpuCount = info.vcpuCount as VcpuCount;
    const vm = await this.restores.restoreFrom(
      dir,
      vcpuCount,
      info.minMemoryMb,
      info.minMemoryMb,
      true,
      [],
      request.prepareNetwork ? { prepare: request.prepareNetwork } : {},
    );
    // The VM's own disk now lives in its run directory; the rest of the pause is used up (QEMU keeps the memory file mapped).
    await fs.promises.rm(dir, { recursive: true, force: true });
    const now = Date.now();
    const state: PersistedVm = {
      driverId: vm.info.vmId,
      vmId: request.vmId,
      vcpuCount,
      memoryMb: info.minMemoryMb,
      templateId: 'resumed',
      startedAtMs: now,
      expiresAtMs: now + request.lifetimeSeconds * 1000,
      ...(request.diskMb ? { diskMb: request.diskMb } : {}),
    };
    this.kit.states.write(state);
    // The same machine coming back: clock and entropy, but its machine id and boot id stay.
    const identified = this.acquisition.applyIdentity(request.vmId, vm.client, started, true);
    this.kit.track(state, vm.client, vm.info, identified);
    this.kit.events.emit('acquired', { vmId: request.vmId, fromPool: false, ms: Date.now() - started });
    return {
      vmId: request.vmId,
      templateId: state.templateId,
      ip: this.kit.options.network === 'user' ? '10.0.2.15' : '',
      startedAt: new Date(now),
      expiresAt: new Date(state.expiresAtMs),
      pooled: false,
    };
  }

  async discardPause(vmId: string): Promise<void> {
    await fs.promises.rm(this.pauseDir(vmId), { recursive: true, force: true });
  }

  private pauseDir(vmId: string): string {
    return path.join(this.kit.options.captureRoot, 'paused', vmId);
  }
}

/**
 * A capture would hold the volumes' filesystems in its memory (page cache, open files, the kernel's idea of
 * the disk) while the images go on changing: a restore of it would corrupt them.
 */
function assertNoVolumes(state: PersistedVm): void {
  if (state.volumes?.length) throw new AppError('CONFLICT', `VM ${state.vmId} has volumes mounted: a VM with volumes cannot be snapshotted, cloned or paused`);
}

/** What a capture made, in the core's terms. */
function outcomeOf(result: CaptureResult, state: PersistedVm): CaptureOutcome {
  return {
    pausedMs: result.pausedMs,
    durationMs: result.durationMs,
    memoryBytes: result.memoryBytes,
    diskBytes: result.diskBytes,
    stateBytes: result.stateBytes,
    vcpuCount: result.vcpuCount,
    memoryMb: result.minMemoryMb,
    diskSizeMb: Math.max(state.diskMb ?? 0, Math.round(result.diskSizeBytes / 2 ** 20)),
  };
}
