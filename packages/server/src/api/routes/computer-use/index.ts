/** Computer use: viewer URLs, the VNC WebSocket relay, the proxy to the in-VM computer-use API, saved recordings. */
import type { App, RouteContext } from '../../types.ts';
import { registerComputerUseProxy } from './proxy.ts';
import { registerRecordingRoutes } from './recordings.ts';
import { registerViewerUrl } from './viewer-url.ts';
import { registerVncPlainHttp } from './vnc-relay.ts';

export { COMPUTER_USE_SCHEMAS } from './schemas.ts';
export { vncRelayHandler } from './vnc-relay.ts';

export function registerComputerUseRoutes(app: App, context: RouteContext): void {
  registerViewerUrl(app, context);
  registerVncPlainHttp(app);
  registerComputerUseProxy(app, context);
  registerRecordingRoutes(app, context);
}
