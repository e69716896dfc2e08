/** The caller's audit log (GET /v1/audit/events), newest first, a page at a time. */
import { useState } from 'react';
import { api, withQuery, type AuditEvent, type Schemas } from '../api.ts';
import { ErrorBanner, formatTime, useLoad } from '../ui.tsx';

export function AuditPage() {
  const [action, setAction] = useState('');
  const [pages, setPages] = useState<AuditEvent[][]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const first = useLoad(async () => {
    const list = await api<Schemas['AuditEventList']>('GET', withQuery('/v1/audit/events', { action, limit: 50 }));
    setPages([list.items]);
    setCursor(list.next_cursor);
    return list;
  }, [action]);
  const [error, setError] = useState<unknown>(null);
  const more = async () => {
    if (!cursor) return;
    try {
      const list = await api<Schemas['AuditEventList']>('GET', withQuery('/v1/audit/events', { action, limit: 50, cursor }));
      setPages((current) => [...current, list.items]);
      setCursor(list.next_cursor);
    } catch (reason) {
      setError(reason);
    }
  };
  return (
    <section>
      <h1>Audit log</h1>
      <form
        className="filter"
        role="search"
        onSubmit={(event) => {
          event.preventDefault();
          setAction(String(new FormData(event.currentTarget).get('action') ?? '').trim());
        }}
      >
        <label htmlFor="action">Action</label>
        <input id="action" name="action" placeholder="api_key.create" />
        <button type="submit">Filter</button>
      </form>
      <ErrorBanner error={first.error ?? error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Action</th>
              <th scope="col">Outcome</th>
              <th scope="col">By</th>
              <th scope="col">Target</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {pages.flat().map((event) => (
              <tr key={event.id}>
                <td>{formatTime(event.created_at)}</td>
                <td>
                  <code>{event.action}</code>
                </td>
                <td className={event.outcome === 'failure' ? 'warn' : undefined}>{event.outcome}</td>
                <td>
                  {event.username ?? '—'} <span className="muted">({event.via})</span>
                </td>
                <td>{event.target_type ? `${event.target_type} ${event.target_id ?? ''}` : '—'}</td>
                <td>{event.source_ip ?? '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {cursor ? (
        <button type="button" onClick={() => void more()}>
          Older events
        </button>
      ) : null}
    </section>
  );
}
