/**
 * Sign-in throttling: failed password (and API key) sign-ins are counted per username and per source address
 * in a sliding window, in the store, so every node of a cluster counts the same ones. Past the limit an
 * attempt is refused with 429 RATE_LIMITED and Retry-After before its password is hashed (each scrypt is CPU
 * that a guesser would otherwise spend freely), even when the password is right.
 *
 * An attempt is counted as a failure from the moment it starts (a pending row, removed when it succeeds), so a
 * burst of parallel guesses cannot all pass the check before the first one is recorded. A refused attempt writes
 * nothing: a flood costs reads, never rows.
 */
import net from 'node:net';
import type { Clock } from '../clock.ts';
import { AppError } from '../errors.ts';
import type { Database } from '../../store/database.ts';
import {
  clearSignInFailuresOf,
  deleteSignInFailure,
  deleteSignInFailuresBefore,
  insertSignInFailure,
  recentSignInFailures,
  type FailureSubject,
} from '../../store/sign-in-failures-store.ts';

export interface SignInThrottleSettings {
  windowSeconds: number;
  /** Failures of one username (known or not) in the window before its sign-ins are refused. */
  maxFailuresPerUsername: number;
  /** Failures from one source address (an IPv6 /64) in the window before its sign-ins are refused. */
  maxFailuresPerSource: number;
}

/** An attempt under way. Unless it is said to have succeeded, it stays counted as a failure. */
export interface SignInAttempt {
  /** Right credentials: the pending failure goes, and so do the username's earlier failures. */
  succeeded(): Promise<void>;
}

/**
 * The address failures are counted under: an IPv4 address as it is (also when IPv4-mapped), an IPv6 address
 * by its /64, which one host or customer usually holds whole.
 */
export function sourceKey(ip: string | null): string | null {
  if (!ip) return null;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (net.isIP(ip) !== 6) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = ip.includes('::') && tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

export class SignInThrottle {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly settings: SignInThrottleSettings,
  ) {}

  /**
   * Starts an attempt for `username` (null: an API key sign-in) from `sourceIp`, or throws 429 RATE_LIMITED
   * with Retry-After when either is over its limit.
   */
  async begin(username: string | null, sourceIp: string | null): Promise<SignInAttempt> {
    const db = this.database.db;
    const subjects = this.subjectsOf(username, sourceKey(sourceIp));
    await this.assertUnderLimits(subjects, 0);
    const now = this.clock.now();
    await deleteSignInFailuresBefore(db, this.windowStart(now.getTime()));
    const id = await insertSignInFailure(db, { username, source: sourceKey(sourceIp), at: now.toISOString() });
    try {
      // Counted again with this attempt in: parallel attempts that all passed the first check stop here.
      await this.assertUnderLimits(subjects, 1);
    } catch (error) {
      await deleteSignInFailure(db, id);
      throw error;
    }
    return {
      succeeded: async () => {
        await deleteSignInFailure(db, id);
        if (username !== null) await clearSignInFailuresOf(db, username);
      },
    };
  }

  private subjectsOf(username: string | null, source: string | null): { subject: FailureSubject; max: number }[] {
    return [
      ...(username !== null ? [{ subject: { username }, max: this.settings.maxFailuresPerUsername }] : []),
      ...(source !== null ? [{ subject: { source }, max: this.settings.maxFailuresPerSource }] : []),
    ];
  }

  /** Throws when, not counting this attempt's own pending row (`ownPending`), a subject already has `max` failures. */
  private async assertUnderLimits(subjects: { subject: FailureSubject; max: number }[], ownPending: number): Promise<void> {
    const now = this.clock.now().getTime();
    for (const { subject, max } of subjects) {
      const times = await recentSignInFailures(this.database.db, subject, this.windowStart(now), max + ownPending);
      if (times.length < max + ownPending) continue;
      // Allowed again when the max-th newest failure leaves the window.
      const oldestCounted = Date.parse(times[max + ownPending - 1]!);
      const retryAfter = Math.max(1, Math.ceil((oldestCounted + this.settings.windowSeconds * 1000 - now) / 1000));
      throw new AppError(
        'RATE_LIMITED',
        `too many failed sign-ins for this username or from this address; retry in ${retryAfter} s`,
        { 'Retry-After': String(retryAfter) },
        { retry_after: retryAfter },
      );
    }
  }

  private windowStart(nowMs: number): string {
    return new Date(nowMs - this.settings.windowSeconds * 1000).toISOString();
  }
}
