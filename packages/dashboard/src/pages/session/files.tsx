/** The files of the session's VM: browse its directories, upload to one, download a file. */
import { useState, type FormEvent } from 'react';
import { api, csrfToken, send, withQuery, type Schemas } from '../../api.ts';
import { ErrorBanner, formatBytes, formatTime, useLoad } from '../../ui.tsx';
import { sessionPath } from './session-path.ts';

type FileListing = Schemas['FileListing'];

export function Files({ sessionId }: { sessionId: string }) {
  const [dir, setDir] = useState('/root');
  const listing = useLoad(() => api<FileListing>('GET', withQuery(sessionPath(sessionId, '/files'), { path: dir })), [sessionId, dir]);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);

  const upload = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const formElement = event.currentTarget;
    const file = (formElement.elements.namedItem('file') as HTMLInputElement).files?.[0];
    if (!file) return;
    const form = new FormData();
    form.set('session_id', sessionId);
    form.set('remote_path', `${listing.data?.path ?? dir}/${file.name}`);
    form.set('file', file, file.name);
    setError(null);
    try {
      await send('POST', '/upload', form);
      setNotice(`Uploaded ${file.name}`);
      formElement.reset();
      listing.reload();
    } catch (reason) {
      setError(reason);
    }
  };

  const download = async (path: string, name: string) => {
    setError(null);
    try {
      const response = await fetchRaw(sessionId, path);
      const url = URL.createObjectURL(await response.blob());
      const link = document.createElement('a');
      link.href = url;
      link.download = name;
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (reason) {
      setError(reason);
    }
  };

  const parent = (listing.data?.path ?? dir).replace(/\/[^/]+\/?$/, '') || '/';
  return (
    <section className="card" aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          setDir(String(new FormData(event.currentTarget).get('dir') || '/root'));
        }}
      >
        <label htmlFor="dir" className="visually-hidden">
          Directory
        </label>
        <input id="dir" name="dir" key={listing.data?.path ?? dir} defaultValue={listing.data?.path ?? dir} />
        <button type="submit">Open</button>
        <button type="button" onClick={() => setDir(parent)} disabled={(listing.data?.path ?? dir) === '/'}>
          Up
        </button>
      </form>
      <ErrorBanner error={listing.error ?? error} />
      {notice ? (
        <p role="status" className="muted">
          {notice}
        </p>
      ) : null}
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Size</th>
              <th scope="col">Modified</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(listing.data?.entries ?? []).map((entry) => (
              <tr key={entry.path}>
                <td>
                  {entry.type === 'directory' ? (
                    <button type="button" className="link" onClick={() => setDir(entry.path)}>
                      {entry.name}/
                    </button>
                  ) : (
                    entry.name
                  )}
                </td>
                <td>{entry.type === 'file' ? formatBytes(entry.size) : entry.type}</td>
                <td>{formatTime(entry.modified_at)}</td>
                <td>
                  {entry.type === 'file' ? (
                    <button type="button" onClick={() => void download(entry.path, entry.name)} aria-label={`Download ${entry.name}`}>
                      Download
                    </button>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form className="row" onSubmit={upload}>
        <label htmlFor="file">Upload to this directory</label>
        <input id="file" name="file" type="file" required />
        <button type="submit">Upload</button>
      </form>
    </section>
  );
}

/** The file's bytes (Accept: application/octet-stream streams it rather than base64 in JSON). */
async function fetchRaw(sessionId: string, filename: string): Promise<Response> {
  const csrf = csrfToken();
  const response = await fetch('/download', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/octet-stream', ...(csrf ? { 'x-csrf-token': csrf } : {}) },
    body: JSON.stringify({ session_id: sessionId, filename }),
    credentials: 'same-origin',
  });
  if (!response.ok) await send('POST', '/download', { session_id: sessionId, filename }); // throws the API's error
  return response;
}
