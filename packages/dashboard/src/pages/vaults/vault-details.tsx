/**
 * One vault: its secrets (names, hosts and injection points, never values); add, rotate or delete a secret,
 * rename the vault or delete it, and its request log.
 */
import { useState, type FormEvent } from 'react';
import { api, type Schemas } from '../../api.ts';
import { ErrorBanner, formatTime } from '../../ui.tsx';
import { RequestLog } from './request-log.tsx';
import { clearValues, readSecret, SecretFields } from './secret-fields.tsx';
import { vaultPath } from './vault-path.ts';

type Vault = Schemas['Vault'];
type Injection = Schemas['VaultSecretInjection'];

/** Where a secret may go in a request, as a person reads it: `Authorization: Bearer`, `X-Api-Key`, `Authorization: token`. */
export function describeInjection(inject: Injection): string {
  if (inject.type === 'bearer') return 'Authorization: Bearer';
  if (inject.type === 'basic') return 'Authorization: Basic';
  return inject.prefix ? `${inject.name ?? ''}: ${inject.prefix.trimEnd()}` : (inject.name ?? '');
}

export function VaultDetails({ vault, onChanged, onDeleted }: { vault: Vault; onChanged: () => void; onDeleted: () => void }) {
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
