/** The session's shares: open a port of it to others by link, list the links, revoke one. */
import { useState, type FormEvent } from 'react';
import { api, withQuery, type Schemas } from '../../api.ts';
import { ErrorBanner, formatTime, useLoad } from '../../ui.tsx';

export function Shares({ sessionId }: { sessionId: string }) {
  const list = useLoad(() => api<Schemas['ShareList']>('GET', withQuery('/v1/shares', { session_id: sessionId })), [sessionId]);
  const [error, setError] = useState<unknown>(null);
  const act = async (work: () => Promise<unknown>) => {
    setError(null);
    try {
      await work();
      list.reload();
    } catch (reason) {
      setError(reason);
    }
  };
  const create = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const minutes = Number(form.get('share_minutes') || 0);
    void act(() =>
      api('POST', '/v1/shares', {
        session_id: sessionId,
        port: Number(form.get('share_port')),
        is_public: form.get('share_public') === 'on',
        ...(minutes > 0 ? { expires_in_seconds: minutes * 60 } : {}),
      }),
    );
  };
  return (
    <section className="card" aria-labelledby="shares-heading">
      <h2 id="shares-heading">Shares</h2>
      <p className="muted">A port of this sandbox opened to others by link (public: no sign-in needed).</p>
      <form className="row" onSubmit={create}>
        <label htmlFor="share_port">Port to share</label>
        <input id="share_port" name="share_port" type="number" min={1} max={65535} defaultValue={8000} required />
        <label htmlFor="share_minutes">Expires in (minutes)</label>
        <input id="share_minutes" name="share_minutes" type="number" min={0} placeholder="never" />
        <label className="check">
          <input type="checkbox" name="share_public" /> Public
        </label>
        <button type="submit">Share</button>
      </form>
      <ErrorBanner error={list.error ?? error} />
      <ul>
        {(list.data?.shares ?? []).map((share) => (
          <li key={share.share_id}>
            Port {share.port} {share.is_public ? '(public)' : ''}:{' '}
            <a href={share.url} target="_blank" rel="noreferrer">
              {share.url}
            </a>{' '}
            <span className="muted">expires {formatTime(share.expires_at)}</span>{' '}
            <button type="button" className="danger" onClick={() => void act(() => api('DELETE', `/v1/shares/${encodeURIComponent(share.share_id)}`))}>
              Revoke
            </button>
          </li>
        ))}
      </ul>
    </section>
  );
}
