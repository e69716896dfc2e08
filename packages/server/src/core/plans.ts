/**
 * Subscription plans: the limits attached to each (rate, concurrent VMs, vCPUs, disk, browser sessions). The
 * built-in plans are here; `SANDBOXD_PLANS` (config/auth.ts) replaces or adds plans, and `core/limits.ts`
 * applies them.
 */
import { Type, type Static } from 'typebox';

/** The most VMs one fork (clone) request makes, whatever the plan (core/snapshots.ts's MAX_CLONES). */
export const MAX_FORK_COUNT = 100;

/** Limits attached to a subscription plan; later features (rate limits, quotas) read them. */
export const PlanLimitsSchema = Type.Object({
  /** Execute / async-execute calls allowed per minute. */
  executionsPerMinute: Type.Integer({ minimum: 1 }),
  /** VMs a user may have running at once. */
  maxConcurrentVms: Type.Integer({ minimum: 1 }),
  /** Sum of vCPUs over a user's running VMs. */
  maxTotalVcpus: Type.Integer({ minimum: 1 }),
  /**
   * Size of each VM's root disk, MiB: its filesystem grows to this after the VM is handed out, writing past it
   * fails with ENOSPC in the guest, and the VM's file on the host stays within it plus ~1 % of qcow2 metadata.
   * At least the guest image's own filesystem (1 GiB).
   */
  diskMb: Type.Integer({ minimum: 1024, maximum: 1_048_576 }),
  /** Browser sessions (and renders in progress) a user may have open at once. */
  maxBrowserSessions: Type.Integer({ minimum: 0, maximum: 10_000 }),
  /** How long a paused VM is kept, seconds from its pause; older ones are deleted (`vm.pause_expired`). */
  pausedRetentionSeconds: Type.Integer({ minimum: 60, maximum: 31_536_000 }),
  /**
   * The most VMs one fork (clone) request may make, 1 to MAX_FORK_COUNT; a larger count is refused (429) before
   * anything starts. Absent (a plan given before it existed): its built-in namesake's, else free's (`forkCapOf`).
   */
  maxForkCount: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_FORK_COUNT })),
});
export type PlanLimits = Static<typeof PlanLimitsSchema>;

const DAY_SECONDS = 86_400;

/** Built-in plans; `SANDBOXD_PLANS` (a JSON object of plan name to limits) replaces or adds plans. */
export const DEFAULT_PLANS: Record<string, PlanLimits> = {
  free: {
    executionsPerMinute: 60,
    maxConcurrentVms: 2,
    maxTotalVcpus: 4,
    diskMb: 4096,
    maxBrowserSessions: 2,
    pausedRetentionSeconds: 7 * DAY_SECONDS,
    maxForkCount: 10,
  },
  pro: {
    executionsPerMinute: 600,
    maxConcurrentVms: 10,
    maxTotalVcpus: 32,
    diskMb: 8192,
    maxBrowserSessions: 10,
    pausedRetentionSeconds: 30 * DAY_SECONDS,
    maxForkCount: 100,
  },
  enterprise: {
    executionsPerMinute: 6000,
    maxConcurrentVms: 100,
    maxTotalVcpus: 400,
    diskMb: 16_384,
    maxBrowserSessions: 100,
    pausedRetentionSeconds: 90 * DAY_SECONDS,
    maxForkCount: 100,
  },
};

/** A plan's fork cap: its own, else its built-in namesake's, else free's. */
export function forkCapOf(plan: string, limits: PlanLimits): number {
  return limits.maxForkCount ?? DEFAULT_PLANS[plan]?.maxForkCount ?? DEFAULT_PLANS.free!.maxForkCount!;
}

/**
 * A plan as an operator may give it: diskMb, maxBrowserSessions, pausedRetentionSeconds and maxForkCount came later
 * than the other limits, so a plan that leaves one out keeps its built-in namesake's, or free's (`completePlans`).
 */
export const GivenPlanLimitsSchema = Type.Object({
  ...PlanLimitsSchema.properties,
  diskMb: Type.Optional(PlanLimitsSchema.properties.diskMb),
  maxBrowserSessions: Type.Optional(PlanLimitsSchema.properties.maxBrowserSessions),
  pausedRetentionSeconds: Type.Optional(PlanLimitsSchema.properties.pausedRetentionSeconds),
});
export type GivenPlanLimits = Static<typeof GivenPlanLimitsSchema>;

/** The built-in plans with the given ones over them, each given plan's missing limits filled from its namesake or free. */
export function completePlans(given: Record<string, GivenPlanLimits>): Record<string, PlanLimits> {
  const completed = Object.fromEntries(
    Object.entries(given).map(([name, limits]) => {
      const builtin = DEFAULT_PLANS[name] ?? DEFAULT_PLANS.free!;
      return [
        name,
        {
          diskMb: builtin.diskMb,
          maxBrowserSessions: builtin.maxBrowserSessions,
          pausedRetentionSeconds: builtin.pausedRetentionSeconds,
          maxForkCount: builtin.maxForkCount,
          ...limits,
        },
      ];
    }),
  );
  return { ...DEFAULT_PLANS, ...completed };
}
