/** GET /v1/computeruse/{session_id}/viewer-url: a short-lived noVNC viewer URL and its VNC WebSocket URL. */
import { Type } from 'typebox';
import { DESKTOP_PORTS } from '../../../core/computer-use/desktop.ts';
import { SHARE_TOKEN_PARAM } from '../../../core/shares.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerViewerUrl(app: App, { services, requireAuth }: RouteContext): void {
  const { computerUse, appUrls } = services.sandbox;
  app.get(
    '/v1/computeruse/:session_id/viewer-url',
    {
      schema: {
        tags: ['computer-use'],
        summary: 'Remote-desktop viewer URL',
        description:
          "A link to the desktop session's screen, and the VNC WebSocket it connects to. The link (`/v1/app/{session_id}/6080/vnc.html`) opens sandboxd's own viewer page (noVNC, bundled with the web console, under a strict Content-Security-Policy), never a page of the VM: a viewer link reaches nothing of the VM's port 6080. " +
          'Both carry short-lived tokens (SANDBOXD_VIEWER_TOKEN_TTL_SECONDS, default 600), so the link opens in any browser without an API key: treat it as a secret. ' +
          "The link's VNC token is in its fragment (`#token=…`), which browsers never send to a server (so it is in no request log); its page token (`?sandboxd_token=`) is exchanged for a cookie scoped to the viewer and a redirect to the clean address. " +
          "`view_only=true` makes the server drop every input the viewer sends (keys, pointer, clipboard, resize). Starts the session's VM if it has none. " +
          '409 for a session that is not a desktop session (create one with `"template": "desktop"`).',
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String() }),
        querystring: Type.Object({ view_only: Type.Boolean({ default: false, description: 'Watch only: input from the viewer is dropped' }) }),
        response: authedResponses({ 200: Type.Ref('ViewerUrlResponse') }, { 404: 'No such session among yours', 409: 'The session is not a desktop session' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { session_id: sessionId } = request.params;
      const viewOnly = request.query.view_only ?? false;
      const links = await computerUse.viewer(principalOf(request), sessionId, viewOnly);
      const socketPath = `v1/computeruse/${encodeURIComponent(sessionId)}/vnc/websockify?token=${links.vncToken}`;
      // The server's viewer page (api/preview/desktop-viewer-page.ts) derives its WebSocket address from its
      // own path and reads the VNC token from the fragment, which no request (nor request log) carries.
      const page = new URL(`${appUrls.pathUrl(sessionId, DESKTOP_PORTS.viewer)}vnc.html`);
      page.searchParams.set(SHARE_TOKEN_PARAM, links.pageToken);
      page.hash = new URLSearchParams({ token: links.vncToken, view_only: String(viewOnly) }).toString();
      return {
        session_id: sessionId,
        viewer_url: page.toString(),
        websocket_url: `${appUrls.websocketBase()}/${socketPath}`,
        view_only: viewOnly,
        expires_at: links.expiresAt.toISOString(),
      };
    },
  );
}
