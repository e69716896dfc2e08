/** The caller's API keys: create one (its full key is shown once, here), revoke one. */
import { useState, type FormEvent } from 'react';
import { api, type ApiKeyRecord } from '../api.ts';
import { ErrorBanner, formatTime, useLoad } from '../ui.tsx';

export function ApiKeysPage() {
  const keys = useLoad(() => api<ApiKeyRecord[]>('GET', '/v1/api-keys/'), []);
  const [created, setCreated] = useState<ApiKeyRecord | null>(null);
  const [error, setError] = useState<unknown>(null);

  const create = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const description = String(new FormData(formElement).get('description') ?? '').trim();
    setError(null);
    try {
      setCreated(await api<ApiKeyRecord>('POST', '/v1/api-keys/', description ? { description } : {}));
      formElement.reset();
      keys.reload();
    } catch (reason) {
      setError(reason);
    }
  };

  const revoke = async (key: ApiKeyRecord) => {
    if (!window.confirm(`Revoke the key ${key.key_prefix}…? Programs using it stop working.`)) return;
    setError(null);
    try {
      await api('DELETE', `/v1/api-keys/${key.id}`);
      if (created?.id === key.id) setCreated(null);
      keys.reload();
    } catch (reason) {
      setError(reason);
    }
  };

  return (
    <section>
      <h1>API keys</h1>
      <ErrorBanner error={keys.error ?? error} />
      <form className="card row" onSubmit={create} aria-label="Create an API key">
        <label htmlFor="description">Description</label>
        <input id="description" name="description" maxLength={200} placeholder="CI runner" />
        <button type="submit" className="primary">
          Create key
        </button>
      </form>
      {created?.full_key ? (
        <div className="banner success" role="status">
          <p>
            <strong>Copy this key now:</strong> it is shown only once.
          </p>
          <code className="secret" data-testid="new-key">
            {created.full_key}
          </code>{' '}
          <button type="button" onClick={() => void navigator.clipboard?.writeText(created.full_key ?? '')}>
            Copy
          </button>
        </div>
      ) : null}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Description</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Expires</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(keys.data ?? []).map((key) => (
              <tr key={key.id} data-key-prefix={key.key_prefix}>
                <td>
                  <code>{key.key_prefix}…</code>
                </td>
                <td>{key.description ?? '—'}</td>
                <td>{key.status ?? '—'}</td>
                <td>{formatTime(key.created_at)}</td>
                <td>{formatTime(key.last_used_at)}</td>
                <td>{formatTime(key.expires_at)}</td>
                <td>
                  <button type="button" className="danger" onClick={() => void revoke(key)} aria-label={`Revoke ${key.key_prefix}`}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
