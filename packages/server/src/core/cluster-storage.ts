/**
 * The operators' view of the cluster's object store of paused VMs, snapshots and templates (`VmEngine.storage`):
 * bytes by kind and by user, each node's cache and its hit rates, and garbage collection. Each node keeps its own
 * cache within its limit once a minute and writes its cache's numbers to the store then (`artifact-cache:<node>`),
 * so any node answers for all of them; garbage collection runs on every node at its interval (collections are
 * idempotent: a chunk deleted twice is deleted once).
 */
import { listSettings, writeSetting } from '../store/settings-store.ts';
import type { Database } from '../store/database.ts';
import { BackgroundTimers, type BackgroundFailures } from './background-timers.ts';
import type { Clock } from './clock.ts';
import { AppError } from './errors.ts';
import type { ClusterStorage, StorageUsage } from './vm-engine.ts';

const CACHE_SETTING_PREFIX = 'artifact-cache:';
/** How often a node keeps its cache within its limit and reports it. */
const CACHE_UPKEEP_MS = 60_000;

/** One node's cache as it last reported it. */
export interface NodeCacheReport {
  nodeId: string;
  limitBytes: number;
  usedBytes: number;
  entries: number;
  hits: number;
  misses: number;
  /** hits / (hits + misses), null before the first use. */
  hitRate: number | null;
  hitsByKind: Record<string, number>;
  missesByKind: Record<string, number>;
  reportedAt: string;
}

export interface StorageReport {
  enabled: boolean;
  store: string | null;
  byKind: Record<string, StorageUsage>;
  byUser: { userId: number; usage: StorageUsage }[];
  chunks: { count: number; bytes: number };
  nodes: NodeCacheReport[];
}

export class ClusterStorageService {
  private readonly timers: BackgroundTimers;

  constructor(
    private readonly database: Database,
    private readonly storage: ClusterStorage | null,
    private readonly nodeId: string,
    private readonly clock: Clock,
    failures: BackgroundFailures,
    private readonly options: { gcIntervalMs: number },
  ) {
    this.timers = new BackgroundTimers(failures);
  }

  /** Starts this node's cache upkeep and garbage collection (nothing when captures stay on their node). */
  start(): void {
    if (!this.storage || this.timers.running) return;
    this.timers.every('artifact_cache', CACHE_UPKEEP_MS, () => this.upkeep());
    if (this.options.gcIntervalMs > 0) this.timers.every('artifact_gc', this.options.gcIntervalMs, () => this.collectGarbage());
  }

  stop(): void {
    this.timers.clear();
  }

  /** Keeps this node's cache within its limit and reports its numbers to the store. */
  async upkeep(): Promise<void> {
    if (!this.storage) return;
    await this.storage.evict();
    const stats = this.storage.cacheStats();
    const report = { ...stats, reportedAt: this.clock.now().toISOString() };
    await writeSetting(this.database.db, `${CACHE_SETTING_PREFIX}${this.nodeId}`, JSON.stringify(report));
  }

  async report(): Promise<StorageReport> {
    if (!this.storage) return { enabled: false, store: null, byKind: {}, byUser: [], chunks: { count: 0, bytes: 0 }, nodes: [] };
    // This node's numbers as they are now; the others' as they last reported them.
    await this.upkeep();
    const usage = await this.storage.usage();
    const nodes = [...(await listSettings(this.database.db, CACHE_SETTING_PREFIX))].map(([name, value]) =>
      nodeReport(name.slice(CACHE_SETTING_PREFIX.length), value),
    );
    return {
      enabled: true,
      store: this.storage.description,
      byKind: usage.byKind,
      byUser: [...usage.byUser].map(([userId, used]) => ({ userId, usage: used })).sort((a, b) => b.usage.dataBytes - a.usage.dataBytes),
      chunks: usage.chunks,
      nodes: nodes.sort((a, b) => a.nodeId.localeCompare(b.nodeId)),
    };
  }

  collectGarbage(options: { dryRun?: boolean } = {}): ReturnType<ClusterStorage['collectGarbage']> {
    if (!this.storage) throw new AppError('CONFLICT', 'captures stay on their nodes here (SANDBOXD_ARTIFACTS is off): the object store holds none to collect');
    return this.storage.collectGarbage(options);
  }
}

function nodeReport(nodeId: string, value: string): NodeCacheReport {
  const stats = JSON.parse(value) as {
    limitBytes: number;
    usedBytes: number;
    entries: number;
    hits: Record<string, number>;
    misses: Record<string, number>;
    reportedAt: string;
  };
  const sum = (counts: Record<string, number>) => Object.values(counts).reduce((total, count) => total + count, 0);
  const hits = sum(stats.hits);
  const misses = sum(stats.misses);
  return {
    nodeId,
    limitBytes: stats.limitBytes,
    usedBytes: stats.usedBytes,
    entries: stats.entries,
    hits,
    misses,
    hitRate: hits + misses > 0 ? hits / (hits + misses) : null,
    hitsByKind: stats.hits,
    missesByKind: stats.misses,
    reportedAt: stats.reportedAt,
  };
}
