/**
 * The desktop viewer page (viewer.html): noVNC's RFB client from the npm package, on the server's VNC relay.
 * The server answers a viewer link with this page itself, under a strict Content-Security-Policy; nothing
 * the desktop's VM serves runs here (its port 6080 is not reachable with a viewer link). A dropped
 * connection is retried a few times, since the token stays valid until the link expires.
 */
import RFB from '@novnc/novnc';
import { viewerParams } from './viewer-params.ts';
import './viewer.css';

const RETRIES = 5;
const RETRY_DELAY_MS = 2000;

const status = document.getElementById('viewer-status')!;
const screen = document.getElementById('noVNC_container')!;

function show(state: 'connecting' | 'connected' | 'disconnected', text: string): void {
  status.dataset.desktopState = state;
  status.textContent = text;
}

function connect(websocketUrl: string, viewOnly: boolean, retriesLeft: number): void {
  const rfb = new RFB(screen, websocketUrl);
  rfb.viewOnly = viewOnly;
  rfb.scaleViewport = true;
  rfb.addEventListener('connect', () => show('connected', `Connected${viewOnly ? ' (view only)' : ''}`));
  rfb.addEventListener('disconnect', (event) => {
    const clean = (event as CustomEvent<{ clean?: boolean }>).detail?.clean === true;
    if (!clean && retriesLeft > 0) {
      show('connecting', 'Connection lost: reconnecting…');
      setTimeout(() => connect(websocketUrl, viewOnly, retriesLeft - 1), RETRY_DELAY_MS);
    } else {
      show('disconnected', 'Disconnected: get a new viewer link to connect again');
    }
  });
}

const params = viewerParams(window.location);
if (params) connect(params.websocketUrl, params.viewOnly, RETRIES);
else show('disconnected', 'This viewer link is incomplete: get a new one (GET /v1/computeruse/{session_id}/viewer-url)');
