/**
 * Stored browser credentials: a username and a password sealed in the server's secret box (bound to the
 * credential's id and user, so a sealed value copied onto another row does not open), and the hosts they may be
 * filled on (`contract/host-patterns.ts`: exact names or addresses, or `*.suffix`; never `*`). `fill-credential`
 * types them into the page of a session only when the page's host is one of those, and no answer carries the
 * password.
 */
import { randomBytes } from 'node:crypto';
import type * as Wire from '../../contract/browser/index.ts';
import { DEFAULT_TIMEOUT_MS, MAX_CREDENTIAL_HOSTS } from '../../contract/browser/index.ts';
import { hostMatchesAny, normalizeHostPattern } from '../../contract/host-patterns.ts';
import { AppError, InputError, notFound } from '../errors.ts';
import type { Principal } from '../authenticator.ts';
import type { Clock } from '../clock.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { Database } from '../../store/database.ts';
import {
  deleteBrowserCredential,
  findBrowserCredential,
  findBrowserCredentialByName,
  insertBrowserCredential,
  listBrowserCredentials,
  updateBrowserCredential,
  type BrowserCredentialRow,
} from '../../store/browser-store.ts';
import type { BrowserSessions } from './sessions.ts';

/** Where a login form's username usually is, when the request names no field. */
const USERNAME_FIELDS = 'input[autocomplete=username], input[type=email], input[name*=user i], input[name*=login i], input[name*=email i], input[type=text]';
const PASSWORD_FIELD = 'input[type=password]';

export class BrowserCredentials {
  constructor(
    private readonly database: Database,
    private readonly clock: Clock,
    private readonly box: SecretBox,
    private readonly sessions: BrowserSessions,
  ) {}

  async create(principal: Principal, request: Wire.BrowserCredentialCreateRequest): Promise<Wire.BrowserCredentialRecord> {
    const hosts = allowedHosts(request.allowed_hosts, ['body', 'allowed_hosts']);
    if (await findBrowserCredentialByName(this.database.db, principal.userId, request.name))
      throw new AppError('CONFLICT', `you already have a credential named "${request.name}"`);
    const now = this.clock.now().toISOString();
    const id = `cred_${randomBytes(12).toString('hex')}`;
    const row: BrowserCredentialRow = {
      id,
      user_id: principal.userId,
      name: request.name,
      username: request.username,
      secret_sealed: '',
      allowed_hosts: JSON.stringify(hosts),
      created_at: now,
      updated_at: now,
      last_used_at: null,
    };
    row.secret_sealed = this.box.seal(request.password, credentialAad(row));
    await insertBrowserCredential(this.database.db, row);
    return toCredentialRecord(row);
  }

  async list(principal: Principal): Promise<Wire.BrowserCredentialList> {
    return { credentials: (await listBrowserCredentials(this.database.db, principal.userId)).map(toCredentialRecord) };
  }

  async get(principal: Principal, credentialId: string): Promise<Wire.BrowserCredentialRecord> {
    return toCredentialRecord(await this.owned(principal, credentialId));
  }

  async update(principal: Principal, credentialId: string, request: Wire.BrowserCredentialUpdateRequest): Promise<Wire.BrowserCredentialRecord> {
    const row = await this.owned(principal, credentialId);
    const changes: Partial<BrowserCredentialRow> = { updated_at: this.clock.now().toISOString() };
    if (request.username !== undefined) changes.username = request.username;
    if (request.allowed_hosts !== undefined) changes.allowed_hosts = JSON.stringify(allowedHosts(request.allowed_hosts, ['body', 'allowed_hosts']));
    if (request.password !== undefined) changes.secret_sealed = this.box.seal(request.password, credentialAad(row));
    await updateBrowserCredential(this.database.db, row.id, changes);
    return toCredentialRecord({ ...row, ...changes });
  }

  async delete(principal: Principal, credentialId: string): Promise<void> {
    const row = await this.owned(principal, credentialId);
    await deleteBrowserCredential(this.database.db, row.id);
  }

  /** Fills the credential into the session's page, when the page is on one of its hosts (403 otherwise). */
  async fill(principal: Principal, request: Wire.BrowserFillCredentialRequest): Promise<Wire.BrowserInteractionResponse> {
    const credential = await this.owned(principal, request.credential_id);
    const password = this.box.open(credential.secret_sealed, credentialAad(credential));
    const timeoutMs = request.timeout ?? DEFAULT_TIMEOUT_MS;
    return this.sessions.interact(principal, request.session_id, async (page) => {
      const host = hostOf(page.url());
      const hosts = JSON.parse(credential.allowed_hosts) as string[];
      if (!host || !hostMatchesAny(hosts, host)) {
        throw new AppError('FORBIDDEN', `credential ${credential.name} may be filled only on ${hosts.join(', ')}; the page is on ${host ?? page.url()}`);
      }
      const usernameSelector = request.username_selector ?? USERNAME_FIELDS;
      const passwordSelector = request.password_selector ?? PASSWORD_FIELD;
      await page.fill(usernameSelector, credential.username, { timeoutMs });
      await page.fill(passwordSelector, password, { timeoutMs });
      if (request.submit) await page.keypress('Enter', { selector: passwordSelector, timeoutMs });
      await updateBrowserCredential(this.database.db, credential.id, { last_used_at: this.clock.now().toISOString() });
      return {
        message: `filled credential ${credential.name} on ${host}${request.submit ? ' and submitted' : ''}`,
        data: { credential_id: credential.id, host, submitted: request.submit ?? false },
      };
    });
  }

  private async owned(principal: Principal, credentialId: string): Promise<BrowserCredentialRow> {
    const row = await findBrowserCredential(this.database.db, credentialId);
    if (!row || row.user_id !== principal.userId) throw notFound(`browser credential ${credentialId}`);
    return row;
  }
}

/** Canonical host patterns, or a 422 at the entry that is not one (`*` alone is refused: that binds nothing). */
function allowedHosts(hosts: string[], loc: (string | number)[]): string[] {
  if (!Array.isArray(hosts) || hosts.length === 0 || hosts.length > MAX_CREDENTIAL_HOSTS)
    throw new InputError([{ loc, msg: `give 1 to ${MAX_CREDENTIAL_HOSTS} host names`, type: 'value_error' }]);
  return hosts.map((host, index) => {
    try {
      return normalizeHostPattern(host, { addresses: true });
    } catch {
      throw new InputError([{ loc: [...loc, index], msg: 'not a host name (example.com, *.example.com, or an IPv4 address)', type: 'value_error' }]);
    }
  });
}

/** The page's host, for http(s) pages only: a credential is never filled into a data: or about: page. */
function hostOf(url: string): string | null {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.hostname.toLowerCase() : null;
  } catch {
    return null;
  }
}

/** A sealed password is bound to its credential (and user): it cannot be moved to another row. */
function credentialAad(row: Pick<BrowserCredentialRow, 'id' | 'user_id'>): string {
  return `browser-credential:${row.user_id}:${row.id}`;
}

function toCredentialRecord(row: BrowserCredentialRow): Wire.BrowserCredentialRecord {
  return {
    credential_id: row.id,
    name: row.name,
    username: row.username,
    allowed_hosts: JSON.parse(row.allowed_hosts) as string[],
    created_at: row.created_at,
    updated_at: row.updated_at,
    last_used_at: row.last_used_at,
  };
}
