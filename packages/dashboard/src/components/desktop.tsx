/**
 * A desktop session's screen in the console: noVNC's RFB client (the npm package, bundled with the console, so
 * no page from the VM runs here) on the server's own VNC relay, `websocket_url` of the viewer link, whose
 * short-lived token is all it needs. View-only is enforced by the server; the client only stops sending.
 * Loaded on demand (a dynamic import), so noVNC is not part of the first load.
 */
import { useEffect, useRef, useState } from 'react';
import RFB from '@novnc/novnc';

type State = 'connecting' | 'connected' | 'disconnected';

export default function DesktopView({ websocketUrl, viewOnly }: { websocketUrl: string; viewOnly: boolean }) {
  const screen = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<State>('connecting');

  useEffect(() => {
    const rfb = new RFB(screen.current!, websocketUrl);
    rfb.viewOnly = viewOnly;
    rfb.scaleViewport = true;
    rfb.addEventListener('connect', () => setState('connected'));
    rfb.addEventListener('disconnect', () => setState('disconnected'));
    return () => {
      setState('disconnected');
      rfb.disconnect();
    };
  }, [websocketUrl, viewOnly]);

  return (
    <div>
      <p className="muted" role="status" data-desktop-state={state}>
        {state === 'connected'
          ? `Connected${viewOnly ? ' (view only)' : ''}`
          : state === 'connecting'
            ? 'Connecting to the desktop…'
            : 'Disconnected: get a new link to connect again'}
      </p>
      <div ref={screen} className="desktop-screen" role="img" aria-label="The desktop's screen" />
    </div>
  );
}
