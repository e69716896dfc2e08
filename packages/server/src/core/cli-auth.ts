/**
 * Command-line login: a device-authorization flow (RFC 8628) bound with PKCE (RFC 7636, S256).
 *
 *   start     the command line sends a code challenge; gets a device code (secret, kept by the command
 *             line) and a short user code (shown to the user, typed or opened in a browser)
 *   decide    a signed-in user approves or denies the user code (web page or API)
 *   exchange  the command line polls with the device code and the code verifier; once approved it gets a
 *             new API key described "CLI - <hostname>", exactly once
 *
 * States: pending → approved → consumed, or pending → denied; any state but consumed ends at expiry.
 * The device code is stored only as its SHA-256 hash. Every transition is a conditional update on the
 * expected status, so two racing approvals or exchanges cannot both win. The API key never appears in a
 * URL: only in the body of the exchange's response.
 */
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import type { ApiKeyService, CreatedApiKey } from './api-keys.ts';
import { recordAudit, systemActor, type AuditActor } from './audit.ts';
import type { Clock } from './clock.ts';
import { AppError, conflict, notFound } from './errors.ts';
import type { ClientInfo } from './sign-in.ts';
import type { CliAuthStatus } from '../model.ts';
import { type Database, isUniqueViolation } from '../store/database.ts';
import {
  deleteCliAuthExpiredBefore,
  findCliAuthByDeviceCodeHash,
  findCliAuthByUserCode,
  insertCliAuthRequest,
  transitionCliAuth,
  updateCliAuth,
} from '../store/cli-auth-store.ts';
import type { CliAuthRequestRow } from '../store/schema.ts';

export interface CliAuthSettings {
  /** How long a login may wait for approval and exchange. */
  ttlSeconds: number;
  /** Minimum seconds between two polls of the exchange. */
  intervalSeconds: number;
}

export type { CliAuthStatus };

export interface StartedCliAuth {
  deviceCode: string;
  /** Formatted for people: ABCD-EFGH. */
  userCode: string;
  expiresInSeconds: number;
  intervalSeconds: number;
}

/** What the approval page shows about a login so the user can recognise it. */
export interface CliAuthDescription {
  userCode: string;
  hostname: string;
  status: CliAuthStatus;
  expired: boolean;
  createdAt: string;
  expiresAt: string;
  requesterIp: string | null;
  requesterUserAgent: string | null;
}

export interface ExchangedCliAuth {
  apiKey: CreatedApiKey;
  hostname: string;
}

/** RFC 8628 consonants only: no vowels (no words), no look-alikes such as 0/O or 1/I. */
const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
const USER_CODE_LENGTH = 8;
const SLOW_DOWN_STEP_SECONDS = 5;
const MAX_INTERVAL_SECONDS = 60;
/** A poll may arrive this much earlier than the interval (network jitter) without a slow_down. */
const POLL_SLACK = 0.8;
/** Expired requests are kept this long (so a late poll says "expired", not "unknown"), then deleted. */
const RETENTION_AFTER_EXPIRY_MS = 86_400_000;
const CHALLENGE_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The RFC 8628 / RFC 6749 `error` value clients of other device flows look for, next to our code. */
const OAUTH_ERROR = {
  CLI_AUTH_PENDING: 'authorization_pending',
  CLI_AUTH_SLOW_DOWN: 'slow_down',
  CLI_AUTH_DENIED: 'access_denied',
  CLI_AUTH_EXPIRED: 'expired_token',
  CLI_AUTH_ALREADY_USED: 'invalid_grant',
  CLI_AUTH_INVALID_VERIFIER: 'invalid_grant',
  CLI_AUTH_UNKNOWN_CODE: 'invalid_grant',
} as const;

function cliAuthError(code: keyof typeof OAUTH_ERROR, message: string, fields: Record<string, unknown> = {}): AppError {
  return new AppError(code, message, {}, { error: OAUTH_ERROR[code], ...fields });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest();

/** ABCDEFGH → ABCD-EFGH. */
export function formatUserCode(normalized: string): string {
  return `${normalized.slice(0, 4)}-${normalized.slice(4)}`;
}

/** What a person typed (any case, with or without the dash or spaces) → the stored form, or null. */
export function normalizeUserCode(input: string): string | null {
  const letters = input.toUpperCase().replace(/[\s-]/g, '');
  if (letters.length !== USER_CODE_LENGTH) return null;
  for (const ch of letters) if (!USER_CODE_ALPHABET.includes(ch)) return null;
  return letters;
}

function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** PKCE S256: base64url(SHA-256(verifier)) must equal the challenge (compared in constant time). */
function verifierMatches(verifier: string, challenge: string): boolean {
  const computed = Buffer.from(sha256(verifier).toString('base64url'));
  const expected = Buffer.from(challenge);
  return computed.length === expected.length && timingSafeEqual(computed, expected);
}

export class CliAuthService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly apiKeys: ApiKeyService,
    private readonly settings: CliAuthSettings,
  ) {}

  /** Starts a login for a command line that holds the verifier of `codeChallenge`. */
  async start(input: { hostname: string; codeChallenge: string }, client: ClientInfo): Promise<StartedCliAuth> {
    if (!CHALLENGE_PATTERN.test(input.codeChallenge)) {
      throw new AppError('BAD_REQUEST', 'code_challenge must be base64url(SHA-256(code_verifier)) without padding: 43 characters of A-Z a-z 0-9 - _');
    }
    const now = this.clock.now();
    await deleteCliAuthExpiredBefore(this.database.db, new Date(now.getTime() - RETENTION_AFTER_EXPIRY_MS).toISOString());
    const deviceCode = randomBytes(32).toString('base64url');
    const expiresAt = new Date(now.getTime() + this.settings.ttlSeconds * 1000);
    // 20^8 user codes: a clash with a live one is very unlikely, but the unique index decides; draw again.
    for (let attempt = 0; ; attempt++) {
      const userCode = newUserCode();
      try {
        await insertCliAuthRequest(this.database.db, {
          device_code_hash: sha256(deviceCode).toString('hex'),
          user_code: userCode,
          code_challenge: input.codeChallenge,
          hostname: input.hostname,
          status: 'pending',
          interval_seconds: this.settings.intervalSeconds,
          requester_ip: client.sourceIp,
          requester_user_agent: client.userAgent?.slice(0, 512) ?? null,
          user_id: null,
          api_key_id: null,
          created_at: now.toISOString(),
          expires_at: expiresAt.toISOString(),
          last_polled_at: null,
          decided_at: null,
          consumed_at: null,
        });
        return { deviceCode, userCode: formatUserCode(userCode), expiresInSeconds: this.settings.ttlSeconds, intervalSeconds: this.settings.intervalSeconds };
      } catch (error) {
        if (!isUniqueViolation(error) || attempt >= 5) throw error;
      }
    }
  }

  /** The login behind a user code, for the approval page; 404 when there is none. */
  async describe(userCodeInput: string): Promise<CliAuthDescription> {
    const row = await this.findByUserCode(userCodeInput);
    return {
      userCode: formatUserCode(row.user_code),
      hostname: row.hostname,
      status: row.status,
      expired: this.isExpired(row),
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      requesterIp: row.requester_ip,
      requesterUserAgent: row.requester_user_agent,
    };
  }

  /**
   * Approves or denies a pending login as `actor`, recorded in the audit log in the same transaction.
   * Approving again what the same user already approved is a no-op; any other second decision is 409.
   */
  async decide(actor: AuditActor & { userId: number }, userCodeInput: string, decision: 'approve' | 'deny'): Promise<CliAuthDescription> {
    const row = await this.findByUserCode(userCodeInput);
    const wanted: CliAuthStatus = decision === 'approve' ? 'approved' : 'denied';
    if (row.status === wanted && row.user_id === actor.userId) return this.describe(row.user_code);
    if (row.status !== 'pending') {
      throw conflict(
        `this command-line login was already ${row.status === 'consumed' ? 'approved and used' : row.status}; start a new one with \`sandbox login\``,
      );
    }
    if (this.isExpired(row)) throw cliAuthError('CLI_AUTH_EXPIRED', 'this command-line login has expired; run `sandbox login` again');
    const now = this.clock.now();
    const changed = await this.database.db.transaction().execute(async (trx) => {
      const updated = await transitionCliAuth(trx, row.id, 'pending', { status: wanted, user_id: actor.userId, decided_at: now.toISOString() });
      if (!updated) return undefined;
      await recordAudit(trx, {
        actor,
        action: decision === 'approve' ? 'cli_auth.approve' : 'cli_auth.deny',
        target: { type: 'cli_auth', id: String(row.id) },
        outcome: 'success',
        detail: { hostname: row.hostname, user_code: formatUserCode(row.user_code), requester_ip: row.requester_ip },
        at: now,
      });
      return updated;
    });
    if (!changed) throw conflict('this command-line login was decided by another request at the same time; reload to see its state');
    return this.describe(changed.user_code);
  }

  /**
   * Exchanges an approved login for a new API key, once. Pending logins answer CLI_AUTH_PENDING, or
   * CLI_AUTH_SLOW_DOWN (with a longer interval) when polled faster than the interval.
   */
  async exchange(input: { deviceCode: string; codeVerifier: string }, client: ClientInfo): Promise<ExchangedCliAuth> {
    const row = await findCliAuthByDeviceCodeHash(this.database.db, sha256(input.deviceCode).toString('hex'));
    if (!row) throw cliAuthError('CLI_AUTH_UNKNOWN_CODE', 'no command-line login has this device code; run `sandbox login` again');
    // The verifier comes first: without it, a device code says nothing about the login's state.
    if (!verifierMatches(input.codeVerifier, row.code_challenge)) {
      throw cliAuthError('CLI_AUTH_INVALID_VERIFIER', 'code_verifier does not match the code_challenge this login was started with');
    }
    if (row.status === 'consumed') throw cliAuthError('CLI_AUTH_ALREADY_USED', 'this login was already exchanged for an API key; a key is handed out once');
    if (row.status === 'denied') throw cliAuthError('CLI_AUTH_DENIED', 'the login was denied in the browser');
    if (this.isExpired(row)) throw cliAuthError('CLI_AUTH_EXPIRED', 'the login expired before it was approved; run `sandbox login` again');

    const now = this.clock.now();
    if (row.status === 'pending') {
      const intervalMs = row.interval_seconds * 1000;
      const sinceLast = row.last_polled_at ? now.getTime() - Date.parse(row.last_polled_at) : Infinity;
      if (sinceLast < intervalMs * POLL_SLACK) {
        const interval = Math.min(MAX_INTERVAL_SECONDS, row.interval_seconds + SLOW_DOWN_STEP_SECONDS);
        await updateCliAuth(this.database.db, row.id, { interval_seconds: interval, last_polled_at: now.toISOString() });
        throw cliAuthError('CLI_AUTH_SLOW_DOWN', `polled too fast: wait ${interval} s between polls`, { interval });
      }
      await updateCliAuth(this.database.db, row.id, { last_polled_at: now.toISOString() });
      throw cliAuthError('CLI_AUTH_PENDING', 'waiting for the user to approve the login in the browser', { interval: row.interval_seconds });
    }

    // Approved: claim it first, so of two racing exchanges exactly one creates a key.
    const claimed = await transitionCliAuth(this.database.db, row.id, 'approved', {
      status: 'consumed',
      consumed_at: now.toISOString(),
      last_polled_at: now.toISOString(),
    });
    if (!claimed || claimed.user_id === null)
      throw cliAuthError('CLI_AUTH_ALREADY_USED', 'this login was already exchanged for an API key; a key is handed out once');
    let apiKey: CreatedApiKey;
    try {
      apiKey = await this.apiKeys.create(claimed.user_id, { description: `CLI - ${claimed.hostname}` }, { ...systemActor(claimed.user_id), ...client });
    } catch (error) {
      // Nothing was handed out: let the command line try again.
      await transitionCliAuth(this.database.db, row.id, 'consumed', { status: 'approved', consumed_at: null });
      throw error;
    }
    await updateCliAuth(this.database.db, row.id, { api_key_id: apiKey.id });
    return { apiKey, hostname: claimed.hostname };
  }

  private async findByUserCode(input: string): Promise<CliAuthRequestRow> {
    const normalized = normalizeUserCode(input);
    const row = normalized ? await findCliAuthByUserCode(this.database.db, normalized) : undefined;
    if (!row) throw notFound(`command-line login with code "${input.slice(0, 20)}"`);
    return row;
  }

  private isExpired(row: CliAuthRequestRow): boolean {
    return Date.parse(row.expires_at) <= this.clock.now().getTime();
  }
}
