/**
 * The engine's start and its recovery after a restart: the guest image and the host are prepared, the VMs an
 * earlier process left running are re-adopted (those within their lifetime: their agent reconnected, their
 * identity and disk growth finished if that process died first) or reaped, the warm snapshots are made and the
 * pool filled, and the image and snapshot caches are marked in use (and pruned of what nobody used for long).
 */
import { AgentClient } from '../agent/index.ts';
import { MARK_INTERVAL_MS, markInUse, pruneGuestImages, type GuestImage } from '../image/index.ts';
import type { DefaultTemplateState } from '../core/vm-engine.ts';
import type { HostReport } from '../vm/vm-driver.ts';
import type { EngineAcquisition } from './acquisition.ts';
import type { EngineKit } from './engine-kit.ts';
import type { Restores } from './restores.ts';
import { pruneSnapshotSets, type SnapshotVariants } from './snapshot-variants.ts';

export class EngineRecovery {
  private starting: Promise<SnapshotVariants> | undefined;
  /** Settles once the VMs an earlier process left are re-adopted or reaped (the first part of `start`). */
  private recovering: Promise<void> | undefined;
  private cacheMarks: NodeJS.Timeout | undefined;
  /** Where the built-in template's warm snapshots stand (`VmEngine.defaultTemplateState`). */
  state: DefaultTemplateState = 'idle';

  constructor(
    private readonly kit: EngineKit,
    private readonly restores: Restores,
    private readonly acquisition: EngineAcquisition,
  ) {}

  /** Stops marking the caches in use (the engine closes). */
  close(): void {
    clearInterval(this.cacheMarks);
  }

  /** Whether `start` was called (close() waits for it then). */
  get startedOnce(): Promise<unknown> | undefined {
    return this.starting;
  }

  /** Prepares everything a first acquire needs (host checks, image, snapshots, re-adoption, pool). */
  start(): Promise<SnapshotVariants> {
    if (!this.starting) {
      this.state = 'building';
      this.starting = this.init();
      // After `ready` only the cache marks can fail: the snapshots stay usable.
      this.starting.catch(() => {
        if (this.state !== 'ready') this.state = 'failed';
      });
    }
    return this.starting;
  }

  /** Settles once the VMs an earlier process left are re-adopted or reaped (the first part of `start`). */
  recovered(): Promise<void> {
    this.start().catch(() => {}); // its failure reaches the caller through `recovering`
    return this.recovering!;
  }

  private async init(): Promise<SnapshotVariants> {
    const started = Date.now();
    // Assigned before the first await: `recovered()` reads it right after calling start().
    const recovery = this.prepareAndRecover();
    this.recovering = recovery.then(() => undefined);
    this.recovering.catch(() => {}); // awaited by callers of recovered(); start() rejects with the same error
    const { host, image, variants, adopted } = await recovery;
    for (const vcpus of this.kit.options.warmVcpuCounts) await variants.ensure(vcpus, this.restores.tierFor(this.kit.options.poolMemoryMb));
    this.state = 'ready';
    this.acquisition.keepBuiltinWarm();
    this.kit.events.emit('ready', { host, image, adopted, readyMs: Date.now() - started });
    await this.retainCaches(image, variants);
    return variants;
  }

  /** Host, image and snapshot variants, then re-adoption of what an earlier process left running. */
  private async prepareAndRecover(): Promise<{ host: HostReport; image: GuestImage; variants: SnapshotVariants; adopted: number }> {
    const { driver } = this.kit.options;
    this.kit.events.emit('progress', 'preparing the guest image');
    const image = await this.kit.options.loadImage();
    const host = await driver.prepare(image);
    this.kit.prepared = { host, image, accelerator: host.accelerator };
    const variants = this.restores.snapshotSet(this.restores.builtinTemplate());
    const adopted = await this.recover(image);
    return { host, image, variants, adopted };
  }

  /** Marks the image and snapshot set in use (now and hourly), then prunes what nobody used for long. */
  private async retainCaches(image: GuestImage, variants: SnapshotVariants): Promise<void> {
    const inUse = [image.dir, variants.root];
    await markInUse(inUse);
    this.cacheMarks = setInterval(() => void markInUse(inUse), MARK_INTERVAL_MS).unref();
    const maxAgeMs = this.kit.options.cacheRetentionMs;
    if (maxAgeMs <= 0) return;
    // In the background: removing GiBs must not delay the first VM.
    void Promise.all([pruneGuestImages(image, maxAgeMs), pruneSnapshotSets(this.kit.options.snapshotRoot, variants.root, maxAgeMs)]).then(
      ([images, snapshots]) => {
        const removed = [...images, ...snapshots];
        if (removed.length > 0) this.kit.events.emit('progress', `removed ${removed.length} unused cache entries: ${removed.join(', ')}`);
      },
      (error: Error) => this.kit.events.emit('warning', { code: 'CACHE_PRUNE_FAILED', message: `pruning the image and snapshot caches: ${error.message}` }),
    );
  }

  /** Re-adopts VMs an earlier server left running that are still within their lifetime; reaps the rest. */
  private async recover(image: GuestImage): Promise<number> {
    const now = Date.now();
    const report = await this.kit.options.driver.recover({
      runRoot: this.kit.runRoot,
      keep: (found) => {
        const state = this.kit.states.read(found.vmId);
        return state !== undefined && state.expiresAtMs > now;
      },
    });
    let adopted = 0;
    for (const info of report.adopted) {
      const state = this.kit.states.read(info.vmId)!;
      try {
        const client = await AgentClient.connect({ socketPath: info.agentSocketPath }, { timeoutMs: 10_000, transferDir: info.transferDir });
        // The earlier server may have died between handing the VM out and giving it its identity.
        const identified = client.agent.vmId === state.vmId;
        const ready = identified ? Promise.resolve() : this.acquisition.applyIdentity(state.vmId, client, Date.now());
        this.kit.track(state, client, info, ready);
        // The earlier server may have died before the disk grew; growing again is a no-op otherwise.
        if (state.diskMb && state.diskMb > image.diskSizeMb) this.acquisition.growToQuota(state, state.diskMb, ready);
        adopted += 1;
      } catch (error) {
        this.kit.events.emit('warning', {
          code: 'ADOPT_FAILED',
          vmId: state.vmId,
          message: `could not reconnect to VM ${state.vmId}: ${(error as Error).message}`,
        });
        await this.kit.options.driver.kill(info.vmId).catch(() => {});
      }
    }
    this.kit.states.prune(new Set(this.kit.trackedDriverIds()));
    return adopted;
  }
}
