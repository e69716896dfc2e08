/**
 * The vault: a user's secrets, grouped in vaults, that never enter a VM. Each secret is bound to the hosts it
 * may be sent to and names its injection point (`injection.ts`: where in a request it may go). A session started
 * with `vault_ids` gets one random placeholder per secret as an environment variable of the same name; the
 * egress proxy swaps the placeholder for the value at that point on the way out to a bound host
 * (`vault-gateway.ts`). Values are sealed at rest (AES-256-GCM under the vault key, `vault-key.ts`, which is never
 * in the store) and no route ever returns one: reads show names, hosts, injection points and times.
 */
import { HostPatternError, normalizeHostPattern } from '../../contract/host-patterns.ts';
import { recordAudit, systemActor, type AuditActor } from '../audit.ts';
import type { Principal } from '../authenticator.ts';
import type { Clock } from '../clock.ts';
import { decodeCursor, pageOf } from '../cursor.ts';
import { AppError, badRequest, conflict, notFound } from '../errors.ts';
import { recordEvent, type EventNotifier } from '../events.ts';
import { newVaultId, newVaultPlaceholder } from '../ids.ts';
import type { Session } from '../../model.ts';
import { normalizeInjection, parseInjection, type Injection } from './injection.ts';
import { sealingContext, type VaultKey } from './vault-key.ts';
import type { Database, Executor } from '../../store/database.ts';
import { updateSession } from '../../store/sessions-store.ts';
import {
  countVaults,
  deleteVault,
  deleteVaultSecret,
  findVault,
  findVaultByName,
  insertPlaceholders,
  insertVault,
  listSessionPlaceholders,
  listVaultRequestLogs,
  listVaultSecrets,
  listVaults,
  updateVault,
  upsertVaultSecret,
  type PlaceholderRow,
  type VaultRow,
  type VaultSecretRow,
} from '../../store/vaults-store.ts';
import type { VaultRequestRecord } from '../../activity.ts';

export const MAX_VAULTS_PER_USER = 100;
export const MAX_SECRETS_PER_VAULT = 50;
export const MAX_SECRET_VALUE_BYTES = 16 * 1024;
export const MAX_HOSTS_PER_SECRET = 20;
/** Where the guest finds the deployment's CA (installed at VM start; `NODE_EXTRA_CA_CERTS` points Node at it). */
export const GUEST_CA_PATH = '/usr/local/share/ca-certificates/sandboxd-vault.crt';

/** An environment variable name: what a secret is called, and what its placeholder is exported as. */
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** Names the server sets itself in a vault session's environment. */
const RESERVED_NAMES = new Set(['NODE_EXTRA_CA_CERTS', 'PATH', 'HOME']);

export interface VaultSecretInput {
  name: string;
  value: string;
  allowedHosts: string[];
  /** Where the secret may go in a request; absent: the secret's current one, or `Authorization: Bearer`. */
  inject?: { type: string; name?: string | undefined; prefix?: string | undefined } | undefined;
}

export interface VaultSecretView {
  name: string;
  allowedHosts: string[];
  inject: Injection;
  createdAt: string;
  updatedAt: string;
}

export interface VaultView {
  id: string;
  userId: number;
  name: string;
  description: string | null;
  secrets: VaultSecretView[];
  createdAt: string;
  updatedAt: string;
}

/** What attaching vaults to a session adds: the env (placeholders) and the rows that remember them. */
export interface VaultAttachment {
  env: Record<string, string>;
  placeholders: Omit<PlaceholderRow, 'session_id' | 'created_at'>[];
}

export interface VaultServiceOptions {
  logRetentionDays: number;
}

function checkSecretName(name: string): void {
  if (!SECRET_NAME.test(name))
    throw badRequest(
      `secret name ${JSON.stringify(name)} must be an environment variable name (letters, digits and _, not starting with a digit, at most 128)`,
    );
  if (RESERVED_NAMES.has(name) || name.startsWith('SANDBOXD_')) throw badRequest(`secret name ${name} is reserved`);
}

/** Canonical host patterns (exact names or `*.suffix`); `*` alone is refused: a secret for every host is no binding. */
export function normalizeAllowedHosts(hosts: string[]): string[] {
  if (hosts.length === 0) throw badRequest('allowed_hosts: name at least one host the secret may be sent to');
  if (hosts.length > MAX_HOSTS_PER_SECRET) throw badRequest(`allowed_hosts: at most ${MAX_HOSTS_PER_SECRET} entries`);
  const normalized = hosts.map((host) => {
    try {
      return normalizeHostPattern(host);
    } catch (error) {
      if (error instanceof HostPatternError && error.reason === 'every-host')
        throw badRequest('allowed_hosts: "*" would send the secret to every host; name the hosts');
      throw badRequest(`allowed_hosts: ${JSON.stringify(host)} is not a host name or "*.domain"`);
    }
  });
  return [...new Set(normalized)];
}

function secretView(row: VaultSecretRow): VaultSecretView {
  return {
    name: row.name,
    allowedHosts: JSON.parse(row.allowed_hosts) as string[],
    inject: parseInjection(row.inject),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

interface CheckedSecret {
  name: string;
  value: string;
  allowedHosts: string[];
  /** Undefined: keep the secret's current injection point (or the default for a new one). */
  inject: Injection | undefined;
}

function vaultView(row: VaultRow, secrets: VaultSecretRow[]): VaultView {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    description: row.description,
    secrets: secrets.filter((secret) => secret.vault_id === row.id).map(secretView),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export class VaultService {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly notifier: EventNotifier,
    private readonly box: VaultKey,
    private readonly options: VaultServiceOptions,
  ) {}

  private async owned(db: Executor, userId: number, vaultId: string): Promise<VaultRow> {
    const row = await findVault(db, userId, vaultId);
    if (!row) throw notFound(`vault ${vaultId}`);
    return row;
  }

  private checkSecret(input: VaultSecretInput): CheckedSecret {
    checkSecretName(input.name);
    if (input.value.length === 0) throw badRequest(`secret ${input.name}: the value is empty`);
    if (Buffer.byteLength(input.value) > MAX_SECRET_VALUE_BYTES)
      throw badRequest(`secret ${input.name}: the value is larger than ${MAX_SECRET_VALUE_BYTES} bytes`);
    if (/[\r\n\0]/.test(input.value)) throw badRequest(`secret ${input.name}: the value has a line break or NUL (it goes into HTTP headers)`);
    const inject = input.inject === undefined ? undefined : normalizeInjection(input.inject, input.name);
    return { name: input.name, value: input.value, allowedHosts: normalizeAllowedHosts(input.allowedHosts), inject };
  }

  private sealedRow(vaultId: string, secret: CheckedSecret, at: string, current?: VaultSecretRow): VaultSecretRow {
    return {
      vault_id: vaultId,
      name: secret.name,
      sealed_value: this.box.seal(secret.value, sealingContext(vaultId, secret.name)),
      allowed_hosts: JSON.stringify(secret.allowedHosts),
      inject: JSON.stringify(secret.inject ?? parseInjection(current?.inject)),
      created_at: at,
      updated_at: at,
    };
  }

  /** Creates a vault, with its first secrets; 409 when the name is taken. */
  async create(
    principal: Principal,
    input: { name: string; description?: string | null | undefined; secrets?: VaultSecretInput[] | undefined },
    actor: AuditActor = systemActor(principal.userId),
  ): Promise<VaultView> {
    const secrets = (input.secrets ?? []).map((secret) => this.checkSecret(secret));
    if (secrets.length > 0) this.box.check();
    const names = new Set(secrets.map((secret) => secret.name));
    if (names.size !== secrets.length) throw badRequest('secrets: each name once');
    if (secrets.length > MAX_SECRETS_PER_VAULT) throw badRequest(`secrets: at most ${MAX_SECRETS_PER_VAULT} per vault`);
    const name = input.name.trim();
    if (!name) throw badRequest('name: give the vault a name');
    const now = this.clock.now();
    const at = now.toISOString();
    const id = newVaultId();
    await this.database.db.transaction().execute(async (trx) => {
      if (await findVaultByName(trx, principal.userId, name)) throw conflict(`you have a vault named ${JSON.stringify(name)} already`);
      if ((await countVaults(trx, principal.userId)) >= MAX_VAULTS_PER_USER)
        throw new AppError('QUOTA_EXCEEDED', `you have ${MAX_VAULTS_PER_USER} vaults, the most an account may have`);
      await insertVault(trx, { id, user_id: principal.userId, name, description: input.description ?? null, created_at: at, updated_at: at });
      for (const secret of secrets) await upsertVaultSecret(trx, this.sealedRow(id, secret, at));
      await recordEvent(trx, this.clock, {
        type: 'vault.created',
        userId: principal.userId,
        subjectId: id,
        data: { vault_id: id, name, secret_names: [...names] },
      });
      await recordAudit(trx, {
        actor,
        action: 'vault.create',
        target: { type: 'vault', id },
        outcome: 'success',
        detail: { name, secret_names: [...names] },
        at: now,
      });
    });
    this.notifier.committed();
    return this.get(principal, id);
  }

  async list(principal: Principal): Promise<VaultView[]> {
    const rows = await listVaults(this.database.db, principal.userId);
    const secrets = await listVaultSecrets(
      this.database.db,
      rows.map((row) => row.id),
    );
    return rows.map((row) => vaultView(row, secrets));
  }

  async get(principal: Principal, vaultId: string): Promise<VaultView> {
    const row = await this.owned(this.database.db, principal.userId, vaultId);
    return vaultView(row, await listVaultSecrets(this.database.db, [row.id]));
  }

  /** Renames a vault or changes its description. */
  async update(
    principal: Principal,
    vaultId: string,
    changes: { name?: string | undefined; description?: string | null | undefined },
    actor: AuditActor = systemActor(principal.userId),
  ): Promise<VaultView> {
    const now = this.clock.now();
    await this.database.db.transaction().execute(async (trx) => {
      const row = await this.owned(trx, principal.userId, vaultId);
      const name = changes.name?.trim();
      if (changes.name !== undefined && !name) throw badRequest('name: give the vault a name');
      if (name && name !== row.name && (await findVaultByName(trx, principal.userId, name)))
        throw conflict(`you have a vault named ${JSON.stringify(name)} already`);
      await updateVault(trx, row.id, {
        ...(name ? { name } : {}),
        ...(changes.description !== undefined ? { description: changes.description } : {}),
        updated_at: now.toISOString(),
      });
      await recordAudit(trx, {
        actor,
        action: 'vault.update',
        target: { type: 'vault', id: row.id },
        outcome: 'success',
        detail: { name: name ?? row.name },
        at: now,
      });
    });
    return this.get(principal, vaultId);
  }

  /** Deletes a vault and its secrets: placeholders VMs hold stop being swapped at once (they go out unchanged). */
  async delete(principal: Principal, vaultId: string, actor: AuditActor = systemActor(principal.userId)): Promise<VaultView> {
    const view = await this.get(principal, vaultId);
    const now = this.clock.now();
    await this.database.db.transaction().execute(async (trx) => {
      await this.owned(trx, principal.userId, vaultId);
      await deleteVault(trx, vaultId);
      await recordEvent(trx, this.clock, { type: 'vault.deleted', userId: principal.userId, subjectId: vaultId, data: { vault_id: vaultId, name: view.name } });
      await recordAudit(trx, {
        actor,
        action: 'vault.delete',
        target: { type: 'vault', id: vaultId },
        outcome: 'success',
        detail: { name: view.name },
        at: now,
      });
    });
    this.notifier.committed();
    return view;
  }

  /** Adds a secret or replaces its value and hosts (a rotation reaches running VMs at their next request). */
  async setSecret(principal: Principal, vaultId: string, input: VaultSecretInput, actor: AuditActor = systemActor(principal.userId)): Promise<VaultSecretView> {
    const secret = this.checkSecret(input);
    const now = this.clock.now();
    const at = now.toISOString();
    const stored = await this.database.db.transaction().execute(async (trx) => {
      const row = await this.owned(trx, principal.userId, vaultId);
      this.box.check();
      const secrets = await listVaultSecrets(trx, [row.id]);
      const existing = secrets.find((s) => s.name === secret.name);
      if (!existing && secrets.length >= MAX_SECRETS_PER_VAULT) throw badRequest(`a vault holds at most ${MAX_SECRETS_PER_VAULT} secrets`);
      const sealed = { ...this.sealedRow(row.id, secret, at, existing), created_at: existing?.created_at ?? at };
      await upsertVaultSecret(trx, sealed);
      await updateVault(trx, row.id, { updated_at: at });
      await recordAudit(trx, {
        actor,
        action: existing ? 'vault.secret_rotate' : 'vault.secret_add',
        target: { type: 'vault', id: row.id },
        outcome: 'success',
        detail: { secret_name: secret.name, allowed_hosts: secret.allowedHosts, inject: parseInjection(sealed.inject) },
        at: now,
      });
      return sealed;
    });
    return secretView(stored);
  }

  async deleteSecret(principal: Principal, vaultId: string, name: string, actor: AuditActor = systemActor(principal.userId)): Promise<void> {
    const now = this.clock.now();
    await this.database.db.transaction().execute(async (trx) => {
      const row = await this.owned(trx, principal.userId, vaultId);
      if (!(await deleteVaultSecret(trx, row.id, name))) throw notFound(`secret ${name} in vault ${vaultId}`);
      await updateVault(trx, row.id, { updated_at: now.toISOString() });
      await recordAudit(trx, {
        actor,
        action: 'vault.secret_delete',
        target: { type: 'vault', id: row.id },
        outcome: 'success',
        detail: { secret_name: name },
        at: now,
      });
    });
  }

  /**
   * The placeholders a session gets for `vaultIds` (all the caller's: 404 otherwise), as env variables named
   * after the secrets, plus the CA hint for Node. 400 when two vaults have a secret of the same name, or the
   * session's own `env` sets one of those names. `existing`: placeholders the session holds already (kept).
   */
  async prepareAttachment(userId: number, vaultIds: string[], env: Record<string, string>, existing: PlaceholderRow[] = []): Promise<VaultAttachment> {
    const ids = [...new Set(vaultIds)];
    for (const id of ids) await this.owned(this.database.db, userId, id);
    // Placeholders this node could never swap would only fail later, one request at a time.
    if (ids.length > 0) this.box.check();
    const secrets = await listVaultSecrets(this.database.db, ids);
    const attachment: VaultAttachment = { env: {}, placeholders: [] };
    const owners = new Map(existing.map((row) => [row.secret_name, row.vault_id]));
    for (const secret of secrets) {
      const held = existing.find((row) => row.vault_id === secret.vault_id && row.secret_name === secret.name);
      if (held) continue;
      const other = owners.get(secret.name);
      if (other !== undefined)
        throw badRequest(`vaults ${other} and ${secret.vault_id} both have a secret named ${secret.name}: a VM sees one environment variable per name`);
      if (env[secret.name] !== undefined) throw badRequest(`env sets ${secret.name}, which is a secret of vault ${secret.vault_id}: drop it from env`);
      owners.set(secret.name, secret.vault_id);
      const placeholder = newVaultPlaceholder();
      attachment.env[secret.name] = placeholder;
      attachment.placeholders.push({ user_id: userId, vault_id: secret.vault_id, secret_name: secret.name, placeholder });
    }
    if (ids.length > 0 && env.NODE_EXTRA_CA_CERTS === undefined) attachment.env.NODE_EXTRA_CA_CERTS = GUEST_CA_PATH;
    return attachment;
  }

  /** Attaches vaults to a session that exists: its placeholders are added to its env (before its next VM starts). */
  async attachToSession(session: Session, vaultIds: string[]): Promise<Session> {
    if (vaultIds.length === 0) return session;
    const existing = await listSessionPlaceholders(this.database.db, session.id);
    const attachment = await this.prepareAttachment(session.userId, vaultIds, session.env, existing);
    const env = { ...session.env, ...attachment.env };
    await this.database.db.transaction().execute(async (trx) => {
      await this.recordAttachment(trx, session.id, attachment);
      await updateSession(trx, session.id, { env });
    });
    return { ...session, env };
  }

  /** Remembers the placeholders of a new session whose env already holds them. */
  async recordAttachment(db: Executor, sessionId: string, attachment: VaultAttachment): Promise<void> {
    const at = this.clock.now().toISOString();
    await insertPlaceholders(
      db,
      attachment.placeholders.map((row) => ({ ...row, session_id: sessionId, created_at: at })),
    );
  }

  /** A vault's request log, newest first (the gateway's pending entries written first). */
  async listRequestLogs(
    principal: Principal,
    vaultId: string,
    query: { outcome?: 'substituted' | 'flagged'; vmId?: string; secretName?: string; since?: string; until?: string; cursor?: string; limit: number },
    flush: () => Promise<void> = async () => {},
  ): Promise<{ items: VaultRequestRecord[]; nextCursor: string | null }> {
    const row = await this.owned(this.database.db, principal.userId, vaultId);
    await flush();
    const rows = await listVaultRequestLogs(this.database.db, {
      vaultId: row.id,
      limit: query.limit + 1,
      ...(query.outcome ? { outcome: query.outcome } : {}),
      ...(query.vmId ? { vmId: query.vmId } : {}),
      ...(query.secretName ? { secretName: query.secretName } : {}),
      ...(query.since ? { since: query.since } : {}),
      ...(query.until ? { until: query.until } : {}),
      ...(query.cursor ? { beforeId: decodeCursor(query.cursor) } : {}),
    });
    return pageOf(rows, query.limit, (entry) => entry.id);
  }

  get retentionDays(): number {
    return this.options.logRetentionDays;
  }
}
