/**
 * Vaults: secrets a VM uses without holding them. List the caller's vaults (secret names and hosts, never
 * values), create one with secrets, and on a vault: add or rotate a secret, delete one, rename it, delete it,
 * and read its request log. Values are write-only: they go out in a request body once and their fields are
 * cleared after every submit, whatever the answer.
 */
import { useState, type FormEvent } from 'react';
import { api, withQuery, type Schemas } from '../api.ts';
import { ErrorBanner, formatTime, Link, useLoad } from '../ui.tsx';

type Vault = Schemas['Vault'];
type VaultSecretInput = Schemas['VaultSecretInput'];
type Injection = Schemas['VaultSecretInjection'];
type LogEntry = Schemas['VaultRequestLogEntry'];
type LogList = Schemas['VaultRequestLogList'];

const SECRET_NAME_PATTERN = '[A-Za-z_][A-Za-z0-9_]{0,127}';
const LOG_PAGE = 50;

/** `a.example.com, *.example.org` or one a line → the list of hosts. */
export function parseHosts(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((host) => host.trim())
    .filter(Boolean);
}

/** Empties every value field of a form (the value is never kept in the page after a submit). */
function clearValues(form: HTMLFormElement): void {
  for (const input of form.querySelectorAll<HTMLInputElement>('input[type="password"]')) input.value = '';
}

function vaultPath(vault: Pick<Vault, 'id'>): string {
  return `/v1/vaults/${encodeURIComponent(vault.id)}`;
}

/** Where a secret may go in a request, as a person reads it: `Authorization: Bearer`, `X-Api-Key`, `Authorization: token`. */
export function describeInjection(inject: Injection): string {
  if (inject.type === 'bearer') return 'Authorization: Bearer';
  if (inject.type === 'basic') return 'Authorization: Basic';
  return inject.prefix ? `${inject.name ?? ''}: ${inject.prefix.trimEnd()}` : (inject.name ?? '');
}

/**
 * The fields of one secret: name, value (write-only), allowed hosts, and where it is injected (`keep`: a choice to
 * leave a rotated secret's injection point as it is). `prefix` keeps the ids unique.
 */
function SecretFields({
  prefix,
  legend,
  required = false,
  keep = false,
  onRemove,
}: {
  prefix: string;
  legend?: string;
  required?: boolean;
  keep?: boolean;
  onRemove?: () => void;
}) {
  const [type, setType] = useState<string>(keep ? '' : 'bearer');
  return (
    <fieldset className="secret-fields">
      {legend ? <legend>{legend}</legend> : null}
      <label htmlFor={`${prefix}-name`}>Secret name</label>
      <input
        id={`${prefix}-name`}
        name={`${prefix}-name`}
        required={required}
        pattern={SECRET_NAME_PATTERN}
        maxLength={128}
        placeholder="OPENAI_API_KEY"
        autoComplete="off"
        spellCheck={false}
      />
      <label htmlFor={`${prefix}-value`}>Value</label>
      <input id={`${prefix}-value`} name={`${prefix}-value`} required={required} type="password" autoComplete="off" />
      <label htmlFor={`${prefix}-hosts`}>Allowed hosts</label>
      <textarea id={`${prefix}-hosts`} name={`${prefix}-hosts`} required={required} rows={2} placeholder="api.openai.com, *.example.com" spellCheck={false} />
      <label htmlFor={`${prefix}-inject`}>Injected as</label>
      <select id={`${prefix}-inject`} name={`${prefix}-inject`} value={type} onChange={(event) => setType(event.target.value)}>
        {keep ? <option value="">(as it is; Authorization: Bearer for a new secret)</option> : null}
        <option value="bearer">Authorization: Bearer</option>
        <option value="basic">Authorization: Basic (user or password)</option>
        <option value="header">A header of its own</option>
      </select>
      {type === 'header' ? (
        <>
          <label htmlFor={`${prefix}-header`}>Header name</label>
          <input id={`${prefix}-header`} name={`${prefix}-header`} required maxLength={64} placeholder="X-Api-Key" autoComplete="off" spellCheck={false} />
          <label htmlFor={`${prefix}-header-prefix`}>Value prefix</label>
          <input
            id={`${prefix}-header-prefix`}
            name={`${prefix}-header-prefix`}
            maxLength={64}
            placeholder='"token " for GitHub; empty for most'
            autoComplete="off"
            spellCheck={false}
          />
        </>
      ) : null}
      <p className="muted">The value is sent only there, never in a URL or another header; what the host answers is masked.</p>
      {onRemove ? (
        <button type="button" onClick={onRemove}>
          Remove this secret
        </button>
      ) : null}
    </fieldset>
  );
}

function readSecret(form: FormData, prefix: string): VaultSecretInput | null {
  const name = String(form.get(`${prefix}-name`) ?? '').trim();
  const value = String(form.get(`${prefix}-value`) ?? '');
  const hosts = parseHosts(String(form.get(`${prefix}-hosts`) ?? ''));
  if (!name && !value && hosts.length === 0) return null;
  const type = String(form.get(`${prefix}-inject`) ?? '');
  const inject: Injection | null =
    type === 'bearer' || type === 'basic'
      ? { type }
      : type === 'header'
        ? { type: 'header', name: String(form.get(`${prefix}-header`) ?? '').trim(), prefix: String(form.get(`${prefix}-header-prefix`) ?? '') }
        : null;
  return { name, value, allowed_hosts: hosts, ...(inject ? { inject } : {}) };
}

function CreateVaultForm({ onCreated }: { onCreated: (vault: Vault) => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  // Keys of the secret rows; a new key for each row so removing one keeps the others' fields.
  const [rows, setRows] = useState<number[]>([0]);
  const [nextRow, setNextRow] = useState(1);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    clearValues(formElement);
    const secrets = rows.map((row) => readSecret(form, `new-secret-${row}`)).filter((secret): secret is VaultSecretInput => secret !== null);
    const description = String(form.get('description') ?? '').trim();
    const body: Schemas['VaultCreate'] = {
      name: String(form.get('name') ?? '').trim(),
      ...(description ? { description } : {}),
      ...(secrets.length ? { secrets } : {}),
    };
    setBusy(true);
    setError(null);
    try {
      const created = await api<Vault>('POST', '/v1/vaults', body);
      formElement.reset();
      setRows([nextRow]);
      setNextRow((n) => n + 1);
      onCreated(created);
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="card grid-form" onSubmit={submit} aria-label="Create a vault">
      <h2>New vault</h2>
      <ErrorBanner error={error} />
      <label htmlFor="vault-name">Name</label>
      <input id="vault-name" name="name" required maxLength={128} placeholder="openai" />
      <label htmlFor="vault-description">Description</label>
      <input id="vault-description" name="description" maxLength={1000} />
      {rows.map((row, index) => (
        <SecretFields key={row} prefix={`new-secret-${row}`} legend={`Secret ${index + 1}`} onRemove={() => setRows((list) => list.filter((r) => r !== row))} />
      ))}
      <button
        type="button"
        onClick={() => {
          setRows((list) => [...list, nextRow]);
          setNextRow((n) => n + 1);
        }}
      >
        Add a secret
      </button>
      <p className="muted">Values are stored encrypted and never shown again. Hosts: comma- or newline-separated.</p>
      <button type="submit" className="primary" disabled={busy}>
        Create vault
      </button>
    </form>
  );
}

function RequestLog({ vault }: { vault: Vault }) {
  const [outcome, setOutcome] = useState<'' | LogEntry['outcome']>('');
  const [older, setOlder] = useState<LogEntry[]>([]);
  const [cursor, setCursor] = useState<string | null | undefined>(undefined);
  const [error, setError] = useState<unknown>(null);
  const first = useLoad(async () => {
    setOlder([]);
    setCursor(undefined);
    return api<LogList>('GET', withQuery(`${vaultPath(vault)}/request-logs`, { outcome, limit: LOG_PAGE }));
  }, [vault.id, outcome]);
  const entries = [...(first.data?.items ?? []), ...older];
  const next = cursor === undefined ? first.data?.next_cursor : cursor;

  const loadOlder = async () => {
    if (!next) return;
    setError(null);
    try {
      const page = await api<LogList>('GET', withQuery(`${vaultPath(vault)}/request-logs`, { outcome, limit: LOG_PAGE, cursor: next }));
      setOlder((list) => [...list, ...page.items]);
      setCursor(page.next_cursor);
    } catch (reason) {
      setError(reason);
    }
  };

  return (
    <section aria-labelledby="vault-log-heading">
      <h3 id="vault-log-heading">
        Request log{' '}
        <button type="button" onClick={first.reload}>
          Refresh
        </button>
      </h3>
      <div className="filter">
        <label htmlFor="vault-log-outcome">Outcome</label>
        <select id="vault-log-outcome" value={outcome} onChange={(event) => setOutcome(event.target.value as typeof outcome)}>
          <option value="">All</option>
          <option value="substituted">substituted</option>
          <option value="flagged">flagged</option>
        </select>
      </div>
      <ErrorBanner error={first.error ?? error} />
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Requests that used the secrets of {vault.name}</caption>
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Outcome</th>
              <th scope="col">Secret</th>
              <th scope="col">Host</th>
              <th scope="col">Method</th>
              <th scope="col">Path</th>
              <th scope="col">Status</th>
              <th scope="col">VM</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <tr key={entry.id} data-outcome={entry.outcome}>
                <td>{formatTime(entry.at)}</td>
                <td>
                  <span className={`status ${entry.outcome}`} title={entry.detail ?? undefined}>
                    {entry.outcome}
                  </span>
                </td>
                <td>
                  <code>{entry.secret_name}</code>
                </td>
                <td>
                  {entry.scheme === 'http' ? 'http://' : ''}
                  {entry.host}
                </td>
                <td>{entry.method ?? '—'}</td>
                <td>
                  <code className="clip">{entry.path ?? '—'}</code>
                </td>
                <td>{entry.status ?? '—'}</td>
                <td>
                  <Link to={`/sandboxes/${encodeURIComponent(entry.session_id)}`}>
                    <code>{entry.vm_id}</code>
                  </Link>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {first.data && entries.length === 0 ? <p className="muted">No request has used this vault{outcome ? ` with the outcome ${outcome}` : ''}.</p> : null}
      </div>
      {next ? (
        <button type="button" onClick={() => void loadOlder()}>
          Older
        </button>
      ) : null}
    </section>
  );
}

function VaultDetails({ vault, onChanged, onDeleted }: { vault: Vault; onChanged: () => void; onDeleted: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const act = async (work: () => Promise<string | null>): Promise<boolean> => {
    setError(null);
    setNotice(null);
    try {
      setNotice(await work());
      onChanged();
      return true;
    } catch (reason) {
      setError(reason);
      return false;
    }
  };

  const rename = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const description = String(form.get('description') ?? '').trim();
    void act(async () => {
      await api<Vault>('PATCH', vaultPath(vault), {
        name: String(form.get('name') ?? '').trim(),
        description: description || null,
      } satisfies Schemas['VaultUpdate']);
      return 'Saved.';
    });
  };

  const setSecret = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const secret = readSecret(new FormData(formElement), 'set-secret');
    clearValues(formElement);
    if (!secret) return;
    const existed = vault.secrets.some((s) => s.name === secret.name);
    const done = await act(async () => {
      const body: Schemas['VaultSecretSet'] = { value: secret.value, allowed_hosts: secret.allowed_hosts, ...(secret.inject ? { inject: secret.inject } : {}) };
      await api<Schemas['VaultSecret']>('PUT', `${vaultPath(vault)}/secrets/${encodeURIComponent(secret.name)}`, body);
      return existed ? `Secret ${secret.name} rotated.` : `Secret ${secret.name} added.`;
    });
    if (done) formElement.reset();
  };

  const deleteSecret = (name: string) => {
    if (!window.confirm(`Delete the secret ${name}? Running VMs' placeholders for it stop being swapped at once.`)) return;
    void act(async () => {
      await api('DELETE', `${vaultPath(vault)}/secrets/${encodeURIComponent(name)}`);
      return `Secret ${name} deleted.`;
    });
  };

  const deleteVault = async () => {
    if (!window.confirm(`Delete the vault ${vault.name} and its secrets? Running VMs' placeholders stop being swapped at once.`)) return;
    setError(null);
    try {
      await api('DELETE', vaultPath(vault));
      onDeleted();
    } catch (reason) {
      setError(reason);
    }
  };

  return (
    <section className="card" aria-labelledby="vault-heading" data-vault-id={vault.id}>
      <h2 id="vault-heading">
        Vault {vault.name} <code className="muted">{vault.id}</code>
      </h2>
      <ErrorBanner error={error} />
      {notice ? (
        <div className="banner success" role="status">
          {notice}
        </div>
      ) : null}
      <div className="table-wrap">
        <table>
          <caption className="visually-hidden">Secrets of {vault.name}</caption>
          <thead>
            <tr>
              <th scope="col">Secret</th>
              <th scope="col">Allowed hosts</th>
              <th scope="col">Injected as</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {vault.secrets.map((secret) => (
              <tr key={secret.name} data-secret-name={secret.name}>
                <td>
                  <code>{secret.name}</code>
                </td>
                <td>
                  {secret.allowed_hosts.map((host) => (
                    <span className="tag" key={host}>
                      {host}
                    </span>
                  ))}
                </td>
                <td>
                  <code>{describeInjection(secret.inject)}</code>
                </td>
                <td>{formatTime(secret.updated_at)}</td>
                <td>
                  <button type="button" className="danger" onClick={() => deleteSecret(secret.name)} aria-label={`Delete the secret ${secret.name}`}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {vault.secrets.length === 0 ? <p className="muted">No secret in this vault.</p> : null}
      </div>
      <div className="vault-forms">
        <form className="grid-form" onSubmit={(event) => void setSecret(event)} aria-label="Add or rotate a secret">
          <h3>Add or rotate a secret</h3>
          <SecretFields prefix="set-secret" required keep />
          <button type="submit" className="primary">
            Save secret
          </button>
        </form>
        <form className="grid-form" onSubmit={rename} aria-label="Rename the vault" key={`${vault.name}\n${vault.description ?? ''}`}>
          <h3>Name and description</h3>
          <label htmlFor="vault-edit-name">Name</label>
          <input id="vault-edit-name" name="name" required maxLength={128} defaultValue={vault.name} />
          <label htmlFor="vault-edit-description">Description</label>
          <input id="vault-edit-description" name="description" maxLength={1000} defaultValue={vault.description ?? ''} />
          <div className="row">
            <button type="submit">Save</button>
            <button type="button" className="danger" onClick={() => void deleteVault()}>
              Delete vault
            </button>
          </div>
        </form>
      </div>
      <RequestLog vault={vault} />
    </section>
  );
}

export function VaultsPage() {
  const vaults = useLoad(() => api<Vault[]>('GET', '/v1/vaults'), []);
  const [selected, setSelected] = useState<string | null>(null);
  const list = vaults.data ?? [];
  const current = list.find((vault) => vault.id === selected) ?? null;

  return (
    <section>
      <h1>Vaults</h1>
      <p className="muted">
        Secrets a sandbox uses without holding them: its VM sees a placeholder in an environment variable of the secret&apos;s name, swapped for the value only
        where the secret is injected (by default <code>Authorization: Bearer</code>) in HTTPS requests to the secret&apos;s allowed hosts.
      </p>
      <ErrorBanner error={vaults.error} />
      <div className="columns">
        <div className="main-column">
          <div className="table-wrap">
            <table>
              <caption className="visually-hidden">Your vaults</caption>
              <thead>
                <tr>
                  <th scope="col">Vault</th>
                  <th scope="col">Description</th>
                  <th scope="col">Secrets</th>
                  <th scope="col">Updated</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.map((vault) => (
                  <tr key={vault.id} data-vault-id={vault.id}>
                    <td>{vault.name}</td>
                    <td>{vault.description ?? '—'}</td>
                    <td>
                      {vault.secrets.length === 0 ? '—' : null}
                      <ul className="plain">
                        {vault.secrets.map((secret) => (
                          <li key={secret.name}>
                            <code>{secret.name}</code> → {secret.allowed_hosts.join(', ')}
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td>{formatTime(vault.updated_at)}</td>
                    <td>
                      <button
                        type="button"
                        onClick={() => setSelected(selected === vault.id ? null : vault.id)}
                        aria-expanded={selected === vault.id}
                        aria-label={`Manage ${vault.name}`}
                      >
                        Manage
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {vaults.data && list.length === 0 ? <p className="muted">No vaults yet.</p> : null}
          </div>
          {current ? (
            <VaultDetails
              key={current.id}
              vault={current}
              onChanged={vaults.reload}
              onDeleted={() => {
                setSelected(null);
                vaults.reload();
              }}
            />
          ) : null}
        </div>
        <CreateVaultForm
          onCreated={(vault) => {
            setSelected(vault.id);
            vaults.reload();
          }}
        />
      </div>
    </section>
  );
}
