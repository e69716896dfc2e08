/** The URL of an app a port of the session's VM serves. */
import { useState, type FormEvent } from 'react';
import { api, withQuery, type AppUrlResponse } from '../../api.ts';
import { ErrorBanner } from '../../ui.tsx';

export function AppUrls({ sessionId }: { sessionId: string }) {
  const [url, setUrl] = useState<AppUrlResponse | null>(null);
  const [error, setError] = useState<unknown>(null);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setError(null);
    try {
      const port = Number(new FormData(event.currentTarget).get('port'));
      setUrl(await api<AppUrlResponse>('GET', withQuery(`/v1/sessions/app-url/${encodeURIComponent(sessionId)}`, { port })));
    } catch (reason) {
      setError(reason);
    }
  };
  return (
    <section className="card" aria-labelledby="apps-heading">
      <h2 id="apps-heading">App URL</h2>
      <form className="row" onSubmit={submit}>
        <label htmlFor="port">Port</label>
        <input id="port" name="port" type="number" min={1} max={65535} defaultValue={8000} required />
        <button type="submit">Get URL</button>
      </form>
      <ErrorBanner error={error} />
      {url ? (
        <p>
          <a href={url.url} target="_blank" rel="noreferrer">
            {url.url}
          </a>
        </p>
      ) : null}
    </section>
  );
}
