/**
 * `/v1/computeruse/{session_id}/vnc/websockify`: the viewer's WebSocket, relayed by the server itself to the VNC
 * server in the desktop VM over the agent's tunnel (RFB bytes in binary frames, as websockify would carry
 * them; nothing like websockify runs in the guest). The token of a viewer URL authorizes one connection; a
 * view-only token sends the client's half through the RFB input filter. Plain HTTP to the path is answered 426.
 */
import { pipeline } from 'node:stream';
import { Type } from 'typebox';
import { createWebSocketStream, WebSocketServer } from 'ws';
import { RfbViewOnlyFilter } from '../../../core/computer-use/rfb-view-only.ts';
import { AppError } from '../../../core/errors.ts';
import { publicResponses } from '../../schemas/common.ts';
import { credentialOf } from '../../terminal-attach.ts';
import type { App, RouteContext } from '../../types.ts';
import type { UpgradeHandler } from '../../upgrade-router.ts';

const VNC_PATH = /^\/v1\/computeruse\/([^/?]+)\/vnc\/websockify\/?(\?.*)?$/;

interface VncClaim {
  sessionId: string;
  token: string | null;
}

export function vncRelayHandler(services: RouteContext['services']): UpgradeHandler<VncClaim> {
  const { computerUse } = services.sandbox;
  // noVNC asks for the "binary" subprotocol (older viewers for "base64", which is not offered).
  const server = new WebSocketServer({
    noServer: true,
    maxPayload: 16 * 1024 * 1024,
    handleProtocols: (protocols) => (protocols.has('binary') ? 'binary' : false),
  });
  return {
    claim(request) {
      const match = VNC_PATH.exec(request.url ?? '');
      if (!match) return null;
      return { sessionId: decodeURIComponent(match[1]!), token: new URLSearchParams(match[2]?.slice(1) ?? '').get('token') };
    },
    async handle(request, socket, head, claim, log) {
      if (String(request.headers.upgrade).toLowerCase() !== 'websocket' || !request.headers['sec-websocket-key']) {
        throw new AppError(
          'UPGRADE_REQUIRED',
          'This is a WebSocket endpoint (Upgrade: websocket): open it from the viewer or a VNC client that speaks RFB over WebSockets',
        );
      }
      const credential = credentialOf(request);
      const principal = credential ? await services.authenticator.authenticate(credential.value, credential.source) : null;
      const { grant, session, live, tunnel } = await computerUse.connectVnc(claim.sessionId, { token: claim.token, principal });
      await new Promise<void>((resolve) => {
        socket.once('close', () => {
          tunnel.destroy();
          resolve();
        });
        server.handleUpgrade(request, socket, head, (webSocket) => {
          resolve();
          const viewer = createWebSocketStream(webSocket);
          const ended = (): void => {
            void computerUse
              .viewerEvent(session, live.vm.id, 'computer_use.viewer.disconnected', grant.viewOnly)
              .catch((error: unknown) => log.warn({ err: error }, 'viewer event'));
          };
          void computerUse
            .viewerEvent(session, live.vm.id, 'computer_use.viewer.connected', grant.viewOnly)
            .catch((error: unknown) => log.warn({ err: error }, 'viewer event'));
          let closed = false;
          const close = (error?: Error | null): void => {
            if (closed) return;
            closed = true;
            if (error) log.debug({ err: error, 'session.id': session.id }, 'VNC relay ended');
            viewer.destroy();
            tunnel.destroy();
            ended();
          };
          if (grant.viewOnly) pipeline(viewer, new RfbViewOnlyFilter(), tunnel, close);
          else pipeline(viewer, tunnel, close);
          pipeline(tunnel, viewer, close);
        });
      });
    },
  };
}

/** The same path as plain HTTP: an explicit 426 (the spec's "plain HTTP is rejected"). */
export function registerVncPlainHttp(app: App): void {
  app.get(
    '/v1/computeruse/:session_id/vnc/websockify',
    {
      schema: {
        tags: ['computer-use'],
        summary: 'VNC WebSocket relay (plain HTTP is refused)',
        description:
          "The desktop's VNC server (RFB in binary WebSocket frames) for a viewer URL's `websocket_url`, authorized by its `token` query parameter (no API key needed) or by the owner's API key or bearer token (interactive); 401 without either, 404 for a token of another session or another user's session. " +
          'View-only tokens have every input message dropped by the server. A plain HTTP request answers 426 UPGRADE_REQUIRED.',
        security: [{}],
        params: Type.Object({ session_id: Type.String() }),
        querystring: Type.Object({ token: Type.Optional(Type.String({ description: 'The token of a viewer URL' })) }),
        response: publicResponses({}, { 426: 'Not a WebSocket handshake' }),
      },
    },
    async () => {
      throw new AppError(
        'UPGRADE_REQUIRED',
        'This is a WebSocket endpoint (Upgrade: websocket): open it from the viewer or a VNC client that speaks RFB over WebSockets',
      );
    },
  );
}
