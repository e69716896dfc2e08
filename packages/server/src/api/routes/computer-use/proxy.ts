/**
 * `/v1/computeruse/{session_id}/{path}` (every method): the caller's desktop session's computer-use API, reached
 * through the agent's tunnel to the desktop service in the VM. Binary answers (screenshots, recording
 * downloads) are streamed through; JSON answers are read whole and passed on, which is how a successful
 * `POST recording/stop` is seen and its MP4 saved to the object store in the background.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { GuestRecording } from '../../../core/computer-use/computer-use-service.ts';
import { DESKTOP_PORTS } from '../../../core/computer-use/desktop.ts';
import { AppError } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';
import { BEARER_OR_API_KEY, byMediaType } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { PATH_PREVIEW_SANDBOX } from '../../preview/forward-http.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Request headers the desktop service reads; nothing else (credentials, cookies) goes into the VM. */
const FORWARDED_REQUEST_HEADERS = ['content-type', 'content-length', 'accept', 'range'];
/** Largest JSON answer buffered (a screenshot action's base64 PNG of a 4K screen fits). */
const MAX_BUFFERED_BYTES = 64 * 1024 * 1024;

function isStreamed(response: IncomingMessage): boolean {
  const type = String(response.headers['content-type'] ?? '').toLowerCase();
  return type.startsWith('image/') || type.startsWith('video/') || type.startsWith('application/octet-stream');
}

export function registerComputerUseProxy(app: App, { services, requireAuth }: RouteContext): void {
  const { computerUse } = services.sandbox;
  void app.register(async (scope) => {
    // Bodies go to the VM as they came (the desktop service validates them).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    scope.route({
      method: METHODS,
      url: '/v1/computeruse/:session_id/*',
      schema: {
        tags: ['computer-use'],
        summary: 'Authenticated proxy to the in-VM computer-use API',
        description: [
          "Forwards the request to the desktop session's computer-use API, at the path after the session id (its VM is started if it has none). Only the owner passes (404 for anyone else). ",
          'Paths of the API (JSON unless said otherwise): `GET health`; `GET screenshot?scale=&width=&height=` (PNG, streamed; `scale` 0.05–1, or a `width` and/or `height` to fit); ',
          '`POST action` with Anthropic computer-use tool input: `{"action": "screenshot" | "mouse_move" | "left_click" | "right_click" | "middle_click" | "double_click" | "triple_click" | "left_click_drag" | "left_mouse_down" | "left_mouse_up" | "scroll" | "type" | "key" | "hold_key" | "cursor_position" | "wait", ',
          '"coordinate": [x, y], "start_coordinate": [x, y], "text": "...", "scroll_direction": "up|down|left|right", "scroll_amount": n, "duration": seconds}` ',
          '(keys are X keysym names, combinations like `ctrl+s`; `text` on clicks and scrolls names modifier keys held meanwhile; a `screenshot` action answers `base64_image`, `cursor_position` answers `cursor`); ',
          '`GET cursor`; `GET display`, `PUT display {"width","height"}` (resize the screen); `GET windows` (id, title, pid, geometry); ',
          '`POST recording/start {"framerate": 1-30}`, `POST recording/stop` (the MP4 is then saved in the background: `GET /v1/sessions/{session_id}/recordings`), `GET recordings`, `GET recordings/{id}`, `GET recordings/{id}/download` (MP4, streamed), `DELETE recordings/{id}`. ',
          'Errors of the API: 422 `{"detail": [{"loc", "msg", "type"}]}` for bad input, 409 for a recording conflict, 404 for an unknown path or recording.',
        ].join(''),
        security: BEARER_OR_API_KEY,
        params: Type.Object({ session_id: Type.String(), '*': Type.String() }),
        response: {
          default: byMediaType(
            "The computer-use API's answer as it is (JSON; PNG screenshots and MP4 recordings streamed); or sandboxd's own errors (JSON ErrorResponse): 401, 404, 409 (not a desktop session), 502, 503",
            {
              'application/json': Type.Unknown(),
              'image/png': Type.String({ format: 'binary' }),
              'video/mp4': Type.String({ format: 'binary' }),
            },
          ),
        },
      },
      onRequest: requireAuth,
      handler: async (request: FastifyRequest<{ Params: { session_id: string; '*': string } }>, reply: FastifyReply) => {
        const principal = principalOf(request);
        const { session_id: sessionId } = request.params;
        const rest = request.params['*'];
        const raw = request.raw.url ?? '';
        const query = raw.includes('?') ? raw.slice(raw.indexOf('?')) : '';
        const { session, live, tunnel } = await computerUse.openApi(principal, sessionId);
        const headers: Record<string, string> = { host: `127.0.0.1:${DESKTOP_PORTS.api}` };
        for (const name of FORWARDED_REQUEST_HEADERS) {
          const value = request.headers[name];
          if (typeof value === 'string') headers[name] = value;
        }
        const response = await new Promise<IncomingMessage>((resolve, reject) => {
          const upstream = httpRequest({ method: request.method, path: `/${rest}${query}`, headers, createConnection: () => tunnel as Socket });
          upstream.on('response', resolve);
          upstream.on('error', (error) => {
            tunnel.destroy();
            reject(
              new AppError('APP_PORT_UNREACHABLE', `the computer-use API in the VM did not answer (${(error as NodeJS.ErrnoException).code ?? error.message})`),
            );
          });
          reply.raw.once('close', () => {
            if (!reply.raw.writableFinished) upstream.destroy();
          });
          request.raw.pipe(upstream);
        });
        const status = response.statusCode ?? 502;
        reply.code(status);
        for (const name of ['content-type', 'content-length', 'content-disposition', 'cache-control']) {
          const value = response.headers[name];
          if (value !== undefined) reply.header(name, value);
        }
        // What the VM answers is never a page of the API's origin (where the console's cookie lives).
        reply.header('content-security-policy', PATH_PREVIEW_SANDBOX);
        if (isStreamed(response) || request.method === 'HEAD') return reply.send(response);

        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of response as AsyncIterable<Buffer>) {
          size += chunk.length;
          if (size > MAX_BUFFERED_BYTES) {
            response.destroy();
            throw new AppError(
              'APP_PORT_UNREACHABLE',
              `the computer-use API answered more than ${MAX_BUFFERED_BYTES} bytes of ${String(response.headers['content-type'] ?? 'data')}`,
            );
          }
          chunks.push(chunk);
        }
        const body = Buffer.concat(chunks, size);
        if (request.method === 'POST' && rest.replace(/\/+$/, '') === 'recording/stop' && status === 200) {
          try {
            await computerUse.recordingStopped(principal, session, live, JSON.parse(body.toString('utf8')) as GuestRecording);
          } catch (error) {
            request.log.error({ err: error, 'session.id': session.id }, 'recording stopped, but it could not be recorded for saving');
          }
        }
        // An empty answer (204 to OPTIONS) stays empty, without a content type of Fastify's choosing.
        return size === 0 ? reply.send() : reply.send(body);
      },
    });
  });
}
