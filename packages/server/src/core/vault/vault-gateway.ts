/**
 * The vault's side of a VM's egress: for each connection the egress proxy allows, whether sandboxd terminates
 * its TLS (the name is a host one of the session's secrets is bound to), and for each request on such a
 * connection, the swap of placeholders for values, and the masking of values in the answer.
 *
 * A placeholder is swapped only at its secret's injection point (injection.ts: `Authorization: Bearer` by
 * default, Basic credentials, or one named header with a prefix), never in the request target or another
 * header, where a server could echo it back. Every value of the session's secrets is masked in what the
 * upstream answers (response-scrubber.ts), in case it echoes one anyway. A request whose Host is not the
 * connection's name is refused by the interceptor (421) and nothing is swapped in it.
 *
 * A placeholder seen anywhere else the proxy can read (not at its injection point, a host the secret is not
 * bound to, plain HTTP, a misdirected request) goes out unchanged (or not at all) and is flagged: a request-log
 * entry and a `vault.placeholder_flagged` event. HTTPS to hosts no secret is bound to is not decrypted, so a
 * placeholder inside it cannot be seen.
 *
 * Values are read from the store at each request, so a rotation or a deletion applies to the next request.
 */
import { hostMatchesAny } from '../../contract/host-patterns.ts';
import { BackgroundTimers, type BackgroundFailures } from '../background-timers.ts';
import type { Clock } from '../clock.ts';
import { recordEvent, type EventNotifier } from '../events.ts';
import type { Database } from '../../store/database.ts';
import { findVm } from '../../store/vms-store.ts';
import {
  insertVaultRequestLogs,
  listSessionPlaceholders,
  listVaultSecrets,
  pruneVaultRequestLogs,
  type PlaceholderRow,
  type VaultRequestLogEntry,
  type VaultSecretRow,
} from '../../store/vaults-store.ts';
import { describeInjection, injectSecrets, parseInjection, type InjectableSecret } from './injection.ts';
import { ResponseScrubber } from './response-scrubber.ts';
import type { VaultSealer } from './vault-key.ts';
import type { InterceptedRequest, RewrittenRequest, VaultPlan } from './vault-ports.ts';
import { sealingContext } from './vault-key.ts';
import { LogBuffer } from '../log-buffer.ts';

const PLACEHOLDER_PREFIX = 'sbxv_';
/** `sbxv_` + 26 base32 characters (`newVaultPlaceholder`). */
const PLACEHOLDER_PATTERN = /sbxv_[a-z2-7]{26}/g;
const PLACEHOLDER_LENGTH = PLACEHOLDER_PREFIX.length + 26;
const FLAG_EVENT_INTERVAL_MS = 60_000;
const MAX_LOGGED_PATH = 512;
const MAX_DETAIL = 500;

interface SessionSecrets {
  sessionId: string;
  userId: number;
  /** placeholder → its row. */
  placeholders: Map<string, PlaceholderRow>;
  /** `<vault_id>/<name>` → the secret (absent: deleted since the session got its placeholder). */
  secrets: Map<string, VaultSecretRow>;
}

/** The placeholders in `text`. */
export function placeholdersIn(text: string): string[] {
  return text.includes(PLACEHOLDER_PREFIX) ? [...new Set(text.match(PLACEHOLDER_PATTERN) ?? [])] : [];
}

/** Finds placeholders in a byte stream read chunk by chunk, each reported once, also when it straddles two chunks. */
export class PlaceholderScanner {
  private carry = '';
  private readonly seen = new Set<string>();

  /** The placeholders first seen in this chunk. */
  push(chunk: Buffer): string[] {
    const text = this.carry + chunk.toString('latin1');
    // The tail of this chunk is searched again with the next one: a placeholder may begin in it.
    this.carry = text.slice(-(PLACEHOLDER_LENGTH - 1));
    const found = placeholdersIn(text).filter((placeholder) => !this.seen.has(placeholder));
    for (const placeholder of found) this.seen.add(placeholder);
    return found;
  }
}

export class VaultGateway {
  /** VM → session: a VM's session never changes. */
  private readonly sessionOfVm = new Map<string, string>();
  private readonly pendingLog = new LogBuffer<VaultRequestLogEntry>();
  private readonly lastFlagEvent = new Map<string, number>();
  private readonly timers: BackgroundTimers;

  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly events: EventNotifier,
    private readonly box: VaultSealer,
    private readonly retentionDays: number,
    private readonly failures: BackgroundFailures,
  ) {
    this.timers = new BackgroundTimers(failures);
  }

  start(): void {
    if (this.timers.running) return;
    this.timers.every('vault_log_write', 250, () => this.flushLog());
    this.timers.every('vault_log_retention', 3600_000, () => this.prune());
  }

  async stop(): Promise<void> {
    this.timers.clear();
    await this.flushLog().catch((error: unknown) => this.failures.report('vault_log_write', error));
  }

  /** Whether a session holds placeholders (its VMs' web traffic then goes through the proxy, even under an open policy). */
  async sessionHasVault(sessionId: string): Promise<boolean> {
    return (await listSessionPlaceholders(this.database.db, sessionId)).length > 0;
  }

  private async sessionSecrets(vmId: string): Promise<SessionSecrets | null> {
    let sessionId = this.sessionOfVm.get(vmId);
    let userId: number | undefined;
    if (!sessionId) {
      const vm = await findVm(this.database.db, vmId);
      if (!vm?.sessionId) return null;
      sessionId = vm.sessionId;
      userId = vm.userId;
      this.sessionOfVm.set(vmId, sessionId);
    }
    const rows = await listSessionPlaceholders(this.database.db, sessionId);
    if (rows.length === 0) return null;
    const secrets = await listVaultSecrets(this.database.db, [...new Set(rows.map((row) => row.vault_id))]);
    return {
      sessionId,
      userId: userId ?? rows[0]!.user_id,
      placeholders: new Map(rows.map((row) => [row.placeholder, row])),
      secrets: new Map(secrets.map((secret) => [`${secret.vault_id}/${secret.name}`, secret])),
    };
  }

  /** Forgets an ended VM. */
  forget(vmId: string): void {
    this.sessionOfVm.delete(vmId);
  }

  private boundTo(held: SessionSecrets, row: PlaceholderRow, host: string): VaultSecretRow | undefined {
    const secret = held.secrets.get(`${row.vault_id}/${row.secret_name}`);
    return secret && hostMatchesAny(JSON.parse(secret.allowed_hosts) as string[], host) ? secret : undefined;
  }

  /**
   * How an allowed connection is handled: HTTPS to a host one of the session's secrets is bound to is
   * intercepted; plain HTTP is inspected for placeholders; null when the VM's session holds none (or HTTPS
   * elsewhere, which is not decrypted).
   */
  async plan(vmId: string, scheme: 'http' | 'https', name: string | null, address: string): Promise<VaultPlan | null> {
    const held = await this.sessionSecrets(vmId);
    if (!held) return null;
    if (scheme === 'https') {
      const bound = name !== null && [...held.placeholders.values()].some((row) => this.boundTo(held, row, name));
      return bound ? { intercept: true } : null;
    }
    const host = name ?? address;
    const scanner = new PlaceholderScanner();
    return {
      intercept: false,
      inspect: (chunk) => {
        for (const placeholder of scanner.push(chunk)) {
          const row = held.placeholders.get(placeholder);
          if (!row) continue;
          const bound = this.boundTo(held, row, host);
          this.flag(
            vmId,
            held,
            row,
            { scheme, host, method: null, path: null },
            bound ? 'sent over plain HTTP: secrets are only swapped in over HTTPS' : `not bound to ${host}`,
          );
        }
      },
    };
  }

  /**
   * Swaps the placeholders of secrets bound to `request.name` for their values at their injection points, and
   * hands the interceptor a scrubber for every value of the session's secrets. Placeholders anywhere else (and
   * all of them in a misdirected request) stay and are flagged. Each swap and flag is logged once the upstream
   * answered (with its status).
   */
  async rewrite(vmId: string, request: InterceptedRequest): Promise<RewrittenRequest> {
    const held = await this.sessionSecrets(vmId);
    if (!held) return { path: request.path, rawHeaders: request.rawHeaders };
    const resolved = new Map<string, (InjectableSecret & { row: PlaceholderRow; reason: string | null }) | null>();
    const lookup = (placeholder: string) => {
      if (!resolved.has(placeholder)) resolved.set(placeholder, this.resolve(held, placeholder, request.name));
      const found = resolved.get(placeholder);
      // A misdirected request swaps nothing: every placeholder in it is only reported.
      return found && request.misdirected ? { ...found, value: null } : (found ?? undefined);
    };
    const injected = injectSecrets(request, lookup);
    // Every value of the session's secrets, and the header values that carry one in this request: an upstream
    // echoing `Basic base64(user:value)` base64'd once more is then found too.
    const values = [...held.secrets.values()].map((secret) => this.open(secret)).filter((value): value is string => value !== null);
    const carriers = injected.rawHeaders.filter((value, index) => index % 2 === 1 && value !== request.rawHeaders[index]);
    const scrubber = new ResponseScrubber(values, carriers);
    const where = { scheme: 'https', host: request.name, method: request.method, path: loggedPath(request.path) };
    return {
      path: request.path,
      rawHeaders: injected.rawHeaders,
      scrubber,
      done: (status, error) => {
        for (const placeholder of injected.swapped) {
          const { row } = resolved.get(placeholder)!;
          this.log(vmId, held, row, { ...where, outcome: 'substituted', status, detail: error ? `upstream failed: ${error.message}` : null });
        }
        for (const [placeholder, places] of injected.misplaced) {
          const { row, reason, injection } = resolved.get(placeholder)!;
          const detail = request.misdirected
            ? `refused (421 Misdirected Request): ${request.misdirected}; in ${places.join(', ')}`
            : (reason ?? `not at its injection point (${describeInjection(injection)}): in ${places.join(', ')}`);
          this.flag(vmId, held, row, where, detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail, status);
        }
      },
    };
  }

  /** What a placeholder of the session stands for in a request to `host`: its value when bound and readable, else why not. */
  private resolve(held: SessionSecrets, placeholder: string, host: string): (InjectableSecret & { row: PlaceholderRow; reason: string | null }) | null {
    const row = held.placeholders.get(placeholder);
    if (!row) return null;
    const stored = held.secrets.get(`${row.vault_id}/${row.secret_name}`);
    const injection = parseInjection(stored?.inject);
    if (!stored) return { row, injection, value: null, reason: 'the secret was deleted' };
    if (!this.boundTo(held, row, host)) return { row, injection, value: null, reason: `not bound to ${host}` };
    const value = this.open(stored);
    return { row, injection, value, reason: value === null ? 'the secret cannot be decrypted (was the vault key changed?): set it again' : null };
  }

  private open(secret: VaultSecretRow): string | null {
    try {
      return this.box.open(secret.sealed_value, sealingContext(secret.vault_id, secret.name));
    } catch {
      return null; // sealed under another vault key, or this node has none: the placeholder goes out as it is
    }
  }

  private log(
    vmId: string,
    held: SessionSecrets,
    row: PlaceholderRow,
    entry: {
      scheme: string;
      host: string;
      method: string | null;
      path: string | null;
      outcome: 'substituted' | 'flagged';
      status: number | null;
      detail: string | null;
    },
  ): void {
    this.pendingLog.push({
      vault_id: row.vault_id,
      user_id: held.userId,
      secret_name: row.secret_name,
      session_id: held.sessionId,
      vm_id: vmId,
      at: this.clock.now().toISOString(),
      ...entry,
    });
  }

  private flag(
    vmId: string,
    held: SessionSecrets,
    row: PlaceholderRow,
    where: { scheme: string; host: string; method: string | null; path: string | null },
    detail: string,
    status: number | null = null,
  ): void {
    this.log(vmId, held, row, { ...where, outcome: 'flagged', status, detail });
    // One event a minute per session (M-7): a key with the guest-chosen host would let a guest flood events,
    // webhooks and this map with a new name each time. Every flag is still in the request log.
    const key = held.sessionId;
    const now = this.clock.now().getTime();
    if (now - (this.lastFlagEvent.get(key) ?? -Infinity) < FLAG_EVENT_INTERVAL_MS) return;
    this.lastFlagEvent.set(key, now);
    void recordEvent(this.database.db, this.clock, {
      type: 'vault.placeholder_flagged',
      userId: held.userId,
      subjectId: row.vault_id,
      data: { vault_id: row.vault_id, secret_name: row.secret_name, session_id: held.sessionId, vm_id: vmId, scheme: where.scheme, host: where.host, detail },
    })
      .then(() => this.events.committed())
      .catch((error: unknown) => this.failures.report('vault_flag_event', error));
  }

  /** Writes the buffered log entries (a batch the store refused stays for the next turn; the caller reports it). */
  async flushLog(): Promise<void> {
    await this.pendingLog.writeAll((batch) => insertVaultRequestLogs(this.database.db, batch));
  }

  /** Drops log entries past retention, and the flag-event times that no longer hold an event back. */
  async prune(): Promise<number> {
    const now = this.clock.now().getTime();
    for (const [key, at] of this.lastFlagEvent) if (now - at >= FLAG_EVENT_INTERVAL_MS) this.lastFlagEvent.delete(key);
    return pruneVaultRequestLogs(this.database.db, new Date(this.clock.now().getTime() - this.retentionDays * 86_400_000).toISOString());
  }
}

/** The path as logged: without its query (which may carry other credentials), cut to a readable length. */
function loggedPath(path: string): string {
  const bare = path.split('?')[0] ?? path;
  return bare.length > MAX_LOGGED_PATH ? `${bare.slice(0, MAX_LOGGED_PATH)}…` : bare;
}
