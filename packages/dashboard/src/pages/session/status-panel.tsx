/**
 * The session's VM: its status and time left, pause and resume, clone, kill, and save a snapshot of it.
 */
import { useState, type FormEvent } from 'react';
import { api, type Schemas, type SessionStatus } from '../../api.ts';
import { useLiveEvents } from '../../events.ts';
import { navigate } from '../../router.ts';
import { ErrorBanner, formatDuration, formatTime, Link, useLoad, useNow } from '../../ui.tsx';

export function StatusPanel({ sessionId }: { sessionId: string }) {
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
