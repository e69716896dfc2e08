/**
 * The desktop of a desktop session, in noVNC inside the console (components/desktop.tsx, on the server's VNC
 * relay), and the viewer link the server hands out (its own noVNC page, src/viewer/, never the VM's) to open
 * it elsewhere.
 */
import { lazy, Suspense, useState } from 'react';
import { api, withQuery, type Schemas } from '../../api.ts';
import { ErrorBanner, formatTime } from '../../ui.tsx';

const DesktopView = lazy(() => import('../../components/desktop.tsx'));

export function Desktop({ sessionId }: { sessionId: string }) {
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
