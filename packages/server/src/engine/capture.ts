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
import { PauseNotUploaded, type AcquiredVm, type CaptureOutcome, type CaptureOwner, type ResumeVmRequest } from '../core/vm-engine.ts';
import type { CaptureResult, VcpuCount } from '../vm/vm-driver.ts';
import type { EngineAcquisition } from './acquisition.ts';
import { asAppError } from './artifacts.ts';
import { assertHostStorage } from './disk-quota.ts';
import type { EngineKit, LiveEntry } from './engine-kit.ts';
import type { Restores } from './restores.ts';
import type { PersistedVm } from './vm-state-store.ts';
import { mountVolumes, syncVolumes, unmountVolumesForCapture } from './volumes.ts';

/** How long a capture may keep the guest's file transfers waiting should the host not come back to thaw them. */
const CAPTURE_HOLD_MS = 120_000;

export class EngineCapture {
  constructor(
    private readonly kit: EngineKit,
    private readonly restores: Restores,
    private readonly acquisition: EngineAcquisition,
  ) {}

  async snapshot(vmId: string, snapshotId: string, owner?: CaptureOwner): Promise<CaptureOutcome> {
    const entry = await this.kit.liveEntry(vmId);
    const client = await entry.link.connected();
    const volumes = entry.state.volumes ?? [];
    // Unmounted for the capture, mounted again after it: the snapshot holds none of their filesystems' state.
    const unmounted = await unmountVolumesForCapture(
      client,
      volumes,
      volumes.map((_, slot) => slot),
    );
    try {
      return await this.snapshotUnmounted(entry, client, snapshotId, volumes.length > 0, owner);
    } finally {
      await this.remount(entry.state, client, unmounted);
    }
  }

  private async snapshotUnmounted(
    entry: LiveEntry,
    client: AgentClient,
    snapshotId: string,
    hasVolumes: boolean,
    owner: CaptureOwner | undefined,
  ): Promise<CaptureOutcome> {
    // A mounted transfer share blocks the migration; transfers wait until the thaw.
    await client.quiesce({ holdMs: CAPTURE_HOLD_MS });
    try {
      await fs.promises.mkdir(path.dirname(this.restores.snapshotDir(snapshotId)), { recursive: true, mode: 0o711 });
      const result = await this.kit.options.driver.captureSnapshot({
        vmId: entry.state.driverId,
        snapshotDir: this.restores.snapshotDir(snapshotId),
        then: 'run',
        ...(hasVolumes ? { volumes: 'unmounted' as const } : {}),
      });
      // From now on the VM's disk builds on this snapshot, as its clones' will. The cluster gets it in the
      // background (a snapshot answers in milliseconds; its upload takes seconds).
      this.kit.artifacts?.publishInBackground({ kind: 'snapshot', id: snapshotId }, { userId: owner?.userId ?? null });
      return outcomeOf(result, entry.state);
    } finally {
      await client.thaw().catch(() => undefined);
    }
  }

  /**
   * Mounts again the volumes a capture unmounted in a VM that runs on. A VM must not run on without them (its
   * programs would write to its root disk under their paths): if they cannot be mounted, it is killed.
   */
  private async remount(state: PersistedVm, client: AgentClient, slots: readonly number[]): Promise<void> {
    if (slots.length === 0) return;
    try {
      await mountVolumes(client, state.volumes ?? [], slots);
    } catch (error) {
      await this.kit.kill(state.vmId);
      throw new AppError(
        'VM_UNAVAILABLE',
        `VM ${state.vmId} was killed: its volumes could not be mounted again after the capture (${(error as Error).message})`,
      );
    }
  }

  async deleteSnapshot(snapshotId: string): Promise<void> {
    await fs.promises.rm(this.restores.snapshotDir(snapshotId), { recursive: true, force: true });
    await this.kit.artifacts?.remove({ kind: 'snapshot', id: snapshotId });
  }

  async pause(vmId: string, owner?: CaptureOwner): Promise<CaptureOutcome> {
    const entry = await this.kit.liveEntry(vmId);
    const client = await entry.link.connected();
    const volumes = entry.state.volumes ?? [];
    // Read-write volumes stay mounted in the paused guest (flushed; no other VM may mount them until it ends) and
    // come back in the same slots. A read-only one is a throw-away layer the pause ends: unmounted, and mounted
    // again over a new layer at the resume.
    await syncVolumes(client, volumes);
    const readOnly = volumes.flatMap((volume, slot) => (volume.readOnly ? [slot] : []));
    const unmounted = await unmountVolumesForCapture(client, volumes, readOnly);
    await client.quiesce({ holdMs: CAPTURE_HOLD_MS }).catch(async (error: unknown) => {
      await this.remount(entry.state, client, unmounted);
      throw error;
    });
    const dir = this.pauseDir(vmId);
    // A record of an earlier pause of this VM (resumed on another node since) must not let the cache's clean-up take
    // this one for an orphan while it is being made: it is recorded again once uploaded.
    this.kit.artifacts?.forgetLocal({ kind: 'pause', id: vmId });
    await fs.promises.rm(dir, { recursive: true, force: true });
    await fs.promises.mkdir(path.dirname(dir), { recursive: true, mode: 0o711 });
    // The link must not take QEMU's end for a dropped link (it would reconnect, then report the VM lost).
    await entry.link.close();
    let result: CaptureResult;
    try {
      result = await this.kit.options.driver.captureSnapshot({
        vmId: entry.state.driverId,
        snapshotDir: dir,
        then: 'stop',
        ...(volumes.length > 0 ? { volumes: 'held' as const } : {}),
      });
    } catch (error) {
      // The VM runs on as before: give it a link again (its agent waits for a new host).
      const info = this.kit.options.driver.get(entry.state.driverId);
      const again = info
        ? await AgentClient.connect({ socketPath: info.agentSocketPath }, { timeoutMs: 30_000, transferDir: info.transferDir }).catch(() => undefined)
        : undefined;
      if (info && again) {
        this.kit.relink(entry.state, again, info);
        await again.thaw().catch(() => undefined);
        await this.remount(entry.state, again, unmounted);
      } else {
        this.kit.end(vmId, 'crashed');
      }
      throw error;
    }
    // Paused: no longer live here, and not ended either (no listener hears of it).
    this.kit.forget(vmId);
    if (this.kit.artifacts) {
      // The pause is done once the cluster has it; until then the capture stays here for the caller to resume.
      try {
        await this.kit.artifacts.publishCapture({ kind: 'pause', id: vmId }, { userId: owner?.userId ?? null });
      } catch (error) {
        throw new PauseNotUploaded(vmId, asAppError(error) as Error);
      }
    }
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
    const ref = { kind: 'pause', id: request.vmId } as const;
    // Here, or fetched from the cluster's object store (a VM paused on another node, or whose copy here was evicted).
    const dir = this.kit.artifacts ? await this.kit.artifacts.ensureCapture(ref) : this.pauseDir(request.vmId);
    const info = await this.kit.options.driver.readSnapshot(dir);
    if (!info) throw new AppError('NOT_FOUND', `VM ${request.vmId} has no paused state on node ${this.kit.nodeId}`);
    const vcpuCount = info.vcpuCount as VcpuCount;
    // Its volumes back in the slots they had (see `pause`).
    const volumes = request.volumes ?? [];
    const attachments = await this.acquisition.prepareVolumes(volumes);
    const vm = await this.restores.restoreFrom(
      dir,
      vcpuCount,
      info.minMemoryMb,
      info.minMemoryMb,
      true,
      attachments,
      request.prepareNetwork ? { prepare: request.prepareNetwork } : {},
    );
    // The VM's own disk now lives in its run directory; the rest of the pause is used up (QEMU keeps the memory file mapped).
    await fs.promises.rm(dir, { recursive: true, force: true });
    await this.kit.artifacts?.remove(ref).catch((error: unknown) => {
      // A manifest left behind names a VM that runs again; the next pause replaces it, a kill deletes it.
      this.kit.events.emit('warning', {
        code: 'ARTIFACT_DELETE_FAILED',
        message: `resumed VM ${request.vmId}: ${(error as Error).message}`,
        vmId: request.vmId,
      });
    });
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
      ...(volumes.length > 0 ? { volumes } : {}),
    };
    this.kit.states.write(state);
    // The same machine coming back: clock and entropy, but its machine id and boot id stay.
    const identified = this.acquisition.applyIdentity(request.vmId, vm.client, started, true);
    this.kit.track(state, vm.client, vm.info, identified);
    const readOnly = volumes.flatMap((volume, slot) => (volume.readOnly ? [slot] : []));
    if (readOnly.length > 0) {
      // The pause unmounted them: handed back with them mounted, or not at all.
      try {
        await identified;
        await mountVolumes(vm.client, volumes, readOnly);
      } catch (error) {
        await this.kit.kill(request.vmId);
        throw error;
      }
    }
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
    await this.kit.artifacts?.remove({ kind: 'pause', id: vmId });
  }

  private pauseDir(vmId: string): string {
    return path.join(this.kit.options.captureRoot, 'paused', vmId);
  }
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
