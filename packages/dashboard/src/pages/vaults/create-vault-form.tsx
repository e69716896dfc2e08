/** The form that creates a vault, with any number of secrets. */
import { useState, type FormEvent } from 'react';
import { api, type Schemas } from '../../api.ts';
import { ErrorBanner } from '../../ui.tsx';
import { clearValues, readSecret, SecretFields } from './secret-fields.tsx';

type Vault = Schemas['Vault'];
type VaultSecretInput = Schemas['VaultSecretInput'];

export function CreateVaultForm({ onCreated }: { onCreated: (vault: Vault) => void }) {
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
