/**
 * One session: its VM's status and lifetime, run code and see the output, the executions history, the files
 * of the VM (browse, upload, download), app URLs, and terminals (xterm.js, loaded only when one is opened).
 */
import { lazy, Suspense, useState, type FormEvent } from 'react';
import {
  api,
  ApiError,
  csrfToken,
  send,
  withQuery,
  type AppUrlResponse,
  type ExecuteResponse,
  type PtySession,
  type Schemas,
  type SessionStatus,
  type TaskRecord,
} from '../api.ts';
import { useLiveEvents } from '../events.ts';
import { navigate } from '../router.ts';
import { ErrorBanner, formatBytes, formatDuration, formatTime, Link, useLoad, useNow } from '../ui.tsx';

const TerminalView = lazy(() => import('../components/terminal.tsx'));
const DesktopView = lazy(() => import('../components/desktop.tsx'));

type FileListing = Schemas['FileListing'];
type PtyState = Schemas['PtySessionState'];

function sessionPath(sessionId: string, rest = ''): string {
  return `/v1/sessions/${encodeURIComponent(sessionId)}${rest}`;
}

function StatusPanel({ sessionId }: { sessionId: string }) {
  const status = useLoad(() => api<SessionStatus>('GET', `/v1/sessions/status/${encodeURIComponent(sessionId)}`), [sessionId]);
  const now = useNow();
  const [loadedAt, setLoadedAt] = useState(Date.now());
  useLiveEvents(['vm.'], () => {
    status.reload();
    setLoadedAt(Date.now());
  });
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [clones, setClones] = useState<Schemas['VmRecord'][]>([]);
  const act = async (work: () => Promise<string | null>) => {
    setBusy(true);
    setError(null);
    try {
      setNotice(await work());
      status.reload();
      setLoadedAt(Date.now());
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };
  const s = status.data;
  const vmPath = (rest: string) => `/v1/vms/${encodeURIComponent(s?.vm_id ?? '')}${rest}`;
  const paused = s?.vm_status === 'paused';
  const left = s?.expires_in_seconds != null ? s.expires_in_seconds - (paused ? 0 : (now - loadedAt) / 1000) : null;
  const snapshot = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget).get('snapshot_name') ?? '').trim();
    void act(async () => {
      const created = await api<Schemas['SnapshotRecord']>('POST', vmPath('/snapshot'), { name });
      return `Snapshot ${created.name} saved: new sessions can start from it (template "${created.name}").`;
    });
  };
  return (
    <div className="card">
      <ErrorBanner error={status.error ?? error} />
      {notice ? (
        <p role="status" className="banner success">
          {notice}
        </p>
      ) : null}
      <dl className="facts">
        <dt>Session</dt>
        <dd>{sessionId}</dd>
        <dt>VM</dt>
        <dd>{s?.vm_id ?? 'none yet'}</dd>
        <dt>Status</dt>
        <dd>
          <span className={`status ${s?.vm_status ?? 'none'}`} data-testid="vm-status">
            {s?.vm_status ?? (s ? 'no VM' : '…')}
          </span>
        </dd>
        <dt>Ends in</dt>
        <dd>{left === null ? '—' : `${formatDuration(left)}${paused ? ' (paused: not counting)' : ''}`}</dd>
        <dt>Created</dt>
        <dd>{formatTime(s?.created_at)}</dd>
      </dl>
      <div className="row">
        {paused ? (
          <button type="button" onClick={() => void act(async () => (await api('POST', vmPath('/resume')), 'Resumed.'))} disabled={busy}>
            Resume
          </button>
        ) : (
          <button
            type="button"
            onClick={() => void act(async () => (await api('POST', vmPath('/pause')), 'Paused: the VM keeps its state and stops using CPU and memory.'))}
            disabled={busy || !s?.vm_alive}
          >
            Pause
          </button>
        )}
        <button
          type="button"
          disabled={busy || !s?.vm_alive || paused}
          onClick={() =>
            void act(async () => {
              const cloned = await api<{ snapshot: Schemas['SnapshotRecord']; clones: Schemas['VmRecord'][] }>('POST', vmPath('/clone'), { count: 1 });
              setClones((current) => [...current, ...cloned.clones]);
              return `Cloned from a live snapshot (${cloned.snapshot.name}).`;
            })
          }
        >
          Clone
        </button>
        <button
          type="button"
          className="danger"
          disabled={busy || !s?.vm_alive}
          onClick={() =>
            void act(async () => {
              await api('POST', '/kill', { session_id: sessionId });
              navigate('/sandboxes');
              return null;
            })
          }
        >
          Kill VM
        </button>
      </div>
      {clones.length > 0 ? (
        <ul aria-label="Clones">
          {clones.map((clone) =>
            clone.session_id ? (
              <li key={clone.vm_id}>
                <Link to={`/sandboxes/${clone.session_id}`}>Clone {clone.vm_id}</Link>
              </li>
            ) : null,
          )}
        </ul>
      ) : null}
      <form className="row snapshot-form" onSubmit={snapshot}>
        <label htmlFor="snapshot_name">Snapshot name</label>
        <input id="snapshot_name" name="snapshot_name" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,62}" placeholder="my-setup" />
        <button type="submit" disabled={busy || !s?.vm_alive || paused}>
          Snapshot
        </button>
      </form>
    </div>
  );
}

function RunCode({ sessionId, onRan }: { sessionId: string; onRan: () => void }) {
  const [result, setResult] = useState<ExecuteResponse | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setBusy(true);
    setError(null);
    try {
      setResult(
        await api<ExecuteResponse>('POST', '/execute', {
          session_id: sessionId,
          language: String(form.get('language')),
          code: String(form.get('code')),
          timeout: 120,
        }),
      );
      onRan();
    } catch (reason) {
      setError(reason);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="card" aria-labelledby="run-heading">
      <h2 id="run-heading">Run code</h2>
      <form onSubmit={submit}>
        <label htmlFor="language">Language</label>
        <select id="language" name="language" defaultValue="python">
          <option value="python">Python</option>
          <option value="bash">Bash</option>
        </select>
        <label htmlFor="code">Code</label>
        <textarea id="code" name="code" rows={5} spellCheck={false} required defaultValue="" />
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Running…' : 'Run'}
        </button>
      </form>
      <ErrorBanner error={error} />
      {result ? (
        <div className="output" aria-live="polite">
          <p className="muted">
            exit {result.exit_code ?? '—'} · {result.execution_time?.toFixed(2) ?? '—'} s
          </p>
          <pre data-testid="stdout">{result.stdout}</pre>
          {result.stderr ? <pre className="stderr">{result.stderr}</pre> : null}
        </div>
      ) : null}
    </section>
  );
}

function Executions({ sessionId, version }: { sessionId: string; version: number }) {
  const list = useLoad(() => api<TaskRecord[]>('GET', withQuery('/v1/executions/', { session_id: sessionId, limit: 20 })), [sessionId, version]);
  useLiveEvents(['execution.'], list.reload);
  return (
    <section className="card" aria-labelledby="executions-heading">
      <h2 id="executions-heading">Executions</h2>
      <ErrorBanner error={list.error} />
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Code</th>
              <th scope="col">Status</th>
              <th scope="col">Exit</th>
              <th scope="col">Time</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((task) => (
              <tr key={task.id}>
                <td>{task.id}</td>
                <td>
                  <code className="clip">{task.code}</code>
                </td>
                <td>{task.status}</td>
                <td>{task.exit_code ?? '—'}</td>
                <td>{task.execution_time != null ? `${task.execution_time.toFixed(2)} s` : '—'}</td>
                <td>{formatTime(task.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function Files({ sessionId }: { sessionId: string }) {
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

function AppUrls({ sessionId }: { sessionId: string }) {
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

function Shares({ sessionId }: { sessionId: string }) {
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

/**
 * The desktop of a desktop session, in noVNC inside the console (components/desktop.tsx, on the server's VNC
 * relay), and the viewer link the server hands out (its own noVNC page, src/viewer/, never the VM's) to open
 * it elsewhere.
 */
function Desktop({ sessionId }: { sessionId: string }) {
  const [viewer, setViewer] = useState<Schemas['ViewerUrlResponse'] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const open = async (viewOnly: boolean) => {
    setError(null);
    try {
      setViewer(
        await api<Schemas['ViewerUrlResponse']>(
          'GET',
          withQuery(`/v1/computeruse/${encodeURIComponent(sessionId)}/viewer-url`, { view_only: String(viewOnly) }),
        ),
      );
    } catch (reason) {
      setError(reason);
    }
  };
  return (
    <section className="card" aria-labelledby="desktop-heading">
      <h2 id="desktop-heading">Desktop</h2>
      <p className="muted">Sessions created with the template "desktop" have a screen you can watch and control.</p>
      <div className="row">
        <button type="button" onClick={() => void open(false)}>
          Show the desktop
        </button>
        <button type="button" onClick={() => void open(true)}>
          Watch only
        </button>
      </div>
      <ErrorBanner error={error} />
      {viewer ? (
        <>
          <Suspense fallback={<p className="muted">Loading the viewer…</p>}>
            <DesktopView key={viewer.websocket_url} websocketUrl={viewer.websocket_url} viewOnly={viewer.view_only} />
          </Suspense>
          <p>
            <a href={viewer.viewer_url} target="_blank" rel="noreferrer">
              Open the desktop{viewer.view_only ? ' (view only)' : ''} in a tab of its own
            </a>{' '}
            <span className="muted">(the link works until {formatTime(viewer.expires_at)}; treat it as a secret)</span>
          </p>
        </>
      ) : null}
    </section>
  );
}

function Terminals({ sessionId }: { sessionId: string }) {
  // A VM that is not up (yet) has no terminals: an empty list, not an error.
  const list = useLoad(
    () =>
      api<Schemas['PtySessionList']>('GET', sessionPath(sessionId, '/pty/sessions')).catch((reason: unknown) => {
        if (reason instanceof ApiError && (reason.code === 'VM_GONE' || reason.status === 410)) return { sessions: [] };
        throw reason;
      }),
    [sessionId],
  );
  useLiveEvents(['vm.'], list.reload);
  const [open, setOpen] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const create = async () => {
    setError(null);
    try {
      const created = await api<PtySession>('POST', sessionPath(sessionId, '/pty/sessions'), { cols: 100, rows: 30 });
      list.reload();
      setOpen(created.pty_id);
    } catch (reason) {
      setError(reason);
    }
  };
  const running = (list.data?.sessions ?? []).filter((pty: PtyState) => pty.status === 'running');
  return (
    <section className="card wide" aria-labelledby="terminals-heading">
      <h2 id="terminals-heading">Terminals</h2>
      <ErrorBanner error={list.error ?? error} />
      <div className="row">
        <button type="button" className="primary" onClick={() => void create()}>
          New terminal
        </button>
        {running.map((pty) => (
          <button key={pty.pty_id} type="button" onClick={() => setOpen(open === pty.pty_id ? null : pty.pty_id)} aria-pressed={open === pty.pty_id}>
            {open === pty.pty_id ? 'Detach' : 'Attach'} {pty.pty_id}
          </button>
        ))}
      </div>
      {open ? (
        <Suspense fallback={<p className="muted">Loading the terminal…</p>}>
          <TerminalView key={open} sessionId={sessionId} ptyId={open} />
        </Suspense>
      ) : null}
    </section>
  );
}

export function SessionPage({ sessionId }: { sessionId: string }) {
  const [ran, setRan] = useState(0);
  return (
    <section>
      <p>
        <Link to="/sandboxes">← Sandboxes</Link>
      </p>
      <h1>Sandbox session</h1>
      <div className="session-grid">
        <StatusPanel sessionId={sessionId} />
        <RunCode sessionId={sessionId} onRan={() => setRan((n) => n + 1)} />
        <Terminals sessionId={sessionId} />
        <Files sessionId={sessionId} />
        <Executions sessionId={sessionId} version={ran} />
        <AppUrls sessionId={sessionId} />
        <Shares sessionId={sessionId} />
        <Desktop sessionId={sessionId} />
      </div>
    </section>
  );
}
