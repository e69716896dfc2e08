/**
 * Vaults: secrets a VM uses without holding them. The page lists the caller's vaults (secret names and hosts,
 * never values), opens one to manage (vault-details.tsx) and creates one (create-vault-form.tsx). Values are
 * write-only: they go out in a request body once and their fields are cleared after every submit, whatever the
 * answer.
 */
import { useState } from 'react';
import { api, type Schemas } from '../../api.ts';
import { ErrorBanner, formatTime, useLoad } from '../../ui.tsx';
import { CreateVaultForm } from './create-vault-form.tsx';
import { VaultDetails } from './vault-details.tsx';

type Vault = Schemas['Vault'];

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
