/** A vault's request log: the requests that used its secrets, filtered by outcome, a page at a time. */
import { useState } from 'react';
import { api, withQuery, type Schemas } from '../../api.ts';
import { ErrorBanner, formatTime, Link, useLoad } from '../../ui.tsx';
import { vaultPath } from './vault-path.ts';

type Vault = Schemas['Vault'];
type LogEntry = Schemas['VaultRequestLogEntry'];
type LogList = Schemas['VaultRequestLogList'];

const LOG_PAGE = 50;

export function RequestLog({ vault }: { vault: Vault }) {
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
