/**
 * The background checker of custom domain claims: each pending one's TXT record is looked up every
 * `SANDBOXD_CUSTOM_DOMAIN_CHECK_INTERVAL_SECONDS` until it is verified or expires (then it fails), and each
 * verified one's every `SANDBOXD_CUSTOM_DOMAIN_REVERIFY_SECONDS` while it stays verified (`CustomDomainService.check`).
 *
 * Like the webhook dispatcher, it keeps nothing only in memory and is safe with several nodes on one store:
 * the due time is a column (`next_check_at`), and a due claim is taken for one check with a lease (a
 * conditional UPDATE, so of two nodes exactly one wins). The outcome is written only while the lease is
 * still ours, and a node that dies mid-check leaves a lease that lapses, after which any node checks the
 * claim again. It wakes when the next check falls due, and at least every interval (for claims made on
 * other nodes).
 */
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Clock } from './clock.ts';
import type { CustomDomainService } from './custom-domains.ts';
import type { CustomDomainStatus } from '../model.ts';
import type { Database } from '../store/database.ts';
import { claimCheck, findCustomDomain, listDueChecks, nextCheckDue, releaseCheck } from '../store/custom-domains-store.ts';

export interface CheckerOptions {
  /** Longest sleep between two passes. */
  intervalMs: number;
  /** The DNS lookup's own deadline: the lease outlives it by a margin. */
  lookupTimeoutMs: number;
  /** Checks in flight at once on this node. */
  concurrency: number;
}

/** What one check did, emitted as 'check' (the process decides what to log). */
export interface CheckReport {
  domainId: string;
  domain: string;
  status: CustomDomainStatus;
  error: string | null;
}

const DUE_BATCH = 50;
// The lease outlives the lookup's own deadline by this much, to cover reading and writing the claim.
const LEASE_MARGIN_MS = 15_000;
const MIN_DELAY_MS = 250;

/** Emits 'check' (CheckReport) after each check and 'failure' (Error) when a pass fails; the next one retries. */
export class CustomDomainChecker extends EventEmitter {
  private readonly nodeToken = randomBytes(6).toString('hex');
  private leaseCounter = 0;
  private running: Promise<void> | null = null;
  private rerun = false;
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly domains: CustomDomainService,
    private readonly options: CheckerOptions,
  ) {
    super();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.wake();
  }

  /** Stops taking claims and waits for the checks in flight (each bounded by the lookup's deadline). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** Runs a pass soon; passes never overlap (a wake during one runs another after it). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.rerun = true;
      return;
    }
    this.running = (async () => {
      do {
        this.rerun = false;
        try {
          await this.pass();
        } catch (error) {
          this.emit('failure', error);
          this.armTimer(this.options.intervalMs);
        }
      } while (this.rerun && !this.stopped);
      this.running = null;
    })();
  }

  private async pass(): Promise<void> {
    for (;;) {
      const due = await listDueChecks(this.database.db, this.clock.now().toISOString(), DUE_BATCH);
      for (let i = 0; i < due.length && !this.stopped; i += this.options.concurrency) {
        await Promise.all(due.slice(i, i + this.options.concurrency).map((claim) => this.checkOne(claim.id)));
      }
      if (due.length < DUE_BATCH || this.stopped) break;
    }
    await this.scheduleNextPass();
  }

  /** Takes the claim's lease, checks it, and reports; a claim another node took meanwhile is skipped. */
  private async checkOne(id: string): Promise<void> {
    const now = this.clock.now();
    const owner = `${this.nodeToken}-${++this.leaseCounter}`;
    const leaseUntil = new Date(now.getTime() + this.options.lookupTimeoutMs + LEASE_MARGIN_MS).toISOString();
    if (!(await claimCheck(this.database.db, id, now.toISOString(), leaseUntil, owner))) return;
    const claim = await findCustomDomain(this.database.db, id);
    if (!claim || claim.status === 'failed') return;
    try {
      const after = await this.domains.check(claim, owner);
      this.emit('check', { domainId: after.id, domain: after.domain, status: after.status, error: after.lastError } satisfies CheckReport);
    } catch (error) {
      // Hand the claim back at once rather than leave it to the lease's expiry.
      await releaseCheck(this.database.db, id, owner).catch(() => undefined);
      this.emit('failure', error);
    }
  }

  /** Sleeps until the next check falls due, or the interval, whichever is sooner. */
  private async scheduleNextPass(): Promise<void> {
    if (this.stopped) return;
    const now = this.clock.now();
    let delay = this.options.intervalMs;
    const due = await nextCheckDue(this.database.db, now.toISOString());
    // At least MIN_DELAY_MS: a claim that stays due (its check keeps failing to be written) must not spin.
    if (due !== null) delay = Math.max(MIN_DELAY_MS, Math.min(delay, Date.parse(due) - now.getTime()));
    this.armTimer(delay);
  }

  private armTimer(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), delayMs);
    this.timer.unref();
  }
}
