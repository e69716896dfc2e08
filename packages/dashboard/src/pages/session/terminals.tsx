/** The session's terminals: open a new one, attach to or detach from a running one (xterm.js, loaded only when one is opened). */
import { lazy, Suspense, useState } from 'react';
import { api, ApiError, type PtySession, type Schemas } from '../../api.ts';
import { useLiveEvents } from '../../events.ts';
import { ErrorBanner, useLoad } from '../../ui.tsx';
import { sessionPath } from './session-path.ts';

const TerminalView = lazy(() => import('../../components/terminal.tsx'));

type PtyState = Schemas['PtySessionState'];

export function Terminals({ sessionId }: { sessionId: string }) {
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
