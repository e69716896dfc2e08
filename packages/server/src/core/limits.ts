/**
 * Plan limits: executions per minute (429 RATE_LIMITED with Retry-After) and concurrent VMs / total vCPUs
 * (429 QUOTA_EXCEEDED). Both are counted from the store, so every node of a cluster enforces the same
 * numbers without shared memory; two requests racing on different nodes may overshoot by one.
 */
import { forkCapOf, type PlanLimits } from './plans.ts';
import type { Clock } from './clock.ts';
import { AppError } from './errors.ts';
import type { Principal } from './authenticator.ts';
import { countExecutionsSince } from '../store/executions-store.ts';
import { countLiveVms } from '../store/vms-store.ts';
import type { Executor } from '../store/database.ts';

const WINDOW_MS = 60_000;

export class PlanLimiter {
  constructor(
    private readonly plans: Record<string, PlanLimits>,
    private readonly clock: Clock,
  ) {}

  limitsOf(principal: Principal): PlanLimits {
    return this.limitsOfPlan(principal.plan);
  }

  /** The limits of the plan named `plan` (a user's record names it). */
  limitsOfPlan(plan: string): PlanLimits {
    const limits = this.plans[plan];
    // A user whose plan was removed from the configuration gets the most restrictive built-in plan.
    return (
      limits ??
      this.plans.free ?? {
        executionsPerMinute: 60,
        maxConcurrentVms: 1,
        maxTotalVcpus: 2,
        diskMb: 1024,
        maxBrowserSessions: 1,
        pausedRetentionSeconds: 7 * 86_400,
      }
    );
  }

  /** Throws RATE_LIMITED when the user started their plan's number of executions in the last minute. */
  async assertCanExecute(db: Executor, principal: Principal): Promise<void> {
    const limit = this.limitsOf(principal).executionsPerMinute;
    const now = this.clock.now().getTime();
    const { count, oldest } = await countExecutionsSince(db, principal.userId, new Date(now - WINDOW_MS).toISOString());
    if (count < limit) return;
    const retryAfter = oldest ? Math.max(1, Math.ceil((Date.parse(oldest) + WINDOW_MS - now) / 1000)) : 60;
    throw new AppError(
      'RATE_LIMITED',
      `rate limit reached: your plan (${principal.plan}) allows ${limit} executions per minute; retry in ${retryAfter} s`,
      { 'Retry-After': String(retryAfter) },
      { retry_after: retryAfter },
    );
  }

  /**
   * Throws QUOTA_EXCEEDED when a fork of `count` VMs of `vcpuCount` vCPUs each is more than the plan's fork cap
   * (`maxForkCount`), or would take the user past its running VMs or vCPUs: checked before any clone starts (each
   * clone's own start checks again, so a VM started meanwhile still stops the fork).
   */
  async assertCanFork(db: Executor, principal: Principal, count: number, vcpuCount: number): Promise<void> {
    const limits = this.limitsOf(principal);
    const cap = forkCapOf(principal.plan, limits);
    if (count > cap) {
      throw new AppError('QUOTA_EXCEEDED', `quota exceeded: your plan (${principal.plan}) makes at most ${cap} clones in one request; you asked for ${count}`);
    }
    const live = await countLiveVms(db, principal.userId);
    if (live.vms + count > limits.maxConcurrentVms || live.vcpus + count * vcpuCount > limits.maxTotalVcpus) {
      throw new AppError(
        'QUOTA_EXCEEDED',
        `quota exceeded: ${count} clones of ${vcpuCount} vCPUs each would make ${live.vms + count} VMs and ${live.vcpus + count * vcpuCount} vCPUs; your plan (${principal.plan}) allows ${limits.maxConcurrentVms} and ${limits.maxTotalVcpus}`,
      );
    }
  }

  /** Throws QUOTA_EXCEEDED when one more VM with `vcpuCount` vCPUs would exceed the plan. */
  async assertCanStartVm(db: Executor, principal: Principal, vcpuCount: number): Promise<void> {
    const limits = this.limitsOf(principal);
    const live = await countLiveVms(db, principal.userId);
    if (live.vms + 1 > limits.maxConcurrentVms) {
      throw new AppError(
        'QUOTA_EXCEEDED',
        `quota exceeded: your plan (${principal.plan}) allows ${limits.maxConcurrentVms} running VMs and you have ${live.vms}; kill one first`,
      );
    }
    if (live.vcpus + vcpuCount > limits.maxTotalVcpus) {
      throw new AppError(
        'QUOTA_EXCEEDED',
        `quota exceeded: your plan (${principal.plan}) allows ${limits.maxTotalVcpus} vCPUs in total; you use ${live.vcpus} and asked for ${vcpuCount} more`,
      );
    }
  }
}
