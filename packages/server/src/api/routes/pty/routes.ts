/**
 * PTY sessions: `/v1/sessions/{session_id}/pty/sessions…` (the session's current VM) and the same under
 * `/v1/vms/{vm_id}/pty/sessions…`. Attaching is a WebSocket at `…/{pty_id}/connect` (terminal-attach.ts).
 */
import type { FastifyRequest } from 'fastify';
import { Type, type TSchema } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { AppError } from '../../../core/errors.ts';
import { ATTACH_TOKEN_TTL_SECONDS } from '../../../core/terminals.ts';
import type { TerminalScope, TerminalView } from '../../../core/terminals.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import type { PtyCreateBody } from './schemas.ts';

const ATTACH_PROTOCOL =
  'Attach with a WebSocket to websocket_url: binary frames carry raw terminal bytes both ways; text frames carry JSON control messages: {"type":"resize","cols":N,"rows":N} from the client, {"type":"exit","exit_code":N,"signal":S} from the server before it closes. A terminal outlives a dropped connection until it is deleted or its VM ends; a new attachment first receives the recent output (scrollback).';

interface ScopeKind {
  prefix: '/v1/sessions/:session_id' | '/v1/vms/:vm_id';
  params: TSchema;
  scope(params: Record<string, string>): TerminalScope;
  /** The path of a terminal's attach WebSocket. */
  connectPath(view: TerminalView, params: Record<string, string>): string;
}

const SCOPES: Record<'session' | 'vm', ScopeKind> = {
  session: {
    prefix: '/v1/sessions/:session_id',
    params: Type.Object({ session_id: Type.String() }),
    scope: (params) => ({ kind: 'session', sessionId: params.session_id! }),
    connectPath: (view, params) => `/v1/sessions/${encodeURIComponent(params.session_id!)}/pty/sessions/${view.pty_id}/connect`,
  },
  vm: {
    prefix: '/v1/vms/:vm_id',
    params: Type.Object({ vm_id: Type.String() }),
    scope: (params) => ({ kind: 'vm', vmId: params.vm_id! }),
    connectPath: (view, params) => `/v1/vms/${encodeURIComponent(params.vm_id!)}/pty/sessions/${view.pty_id}/connect`,
  },
};

const withPty = (params: TSchema) => Type.Object({ ...(params as ReturnType<typeof Type.Object>).properties, pty_id: Type.String() });

export function registerPtyRoutes(app: App, { services, requireAuth }: RouteContext): void {
  const { terminals, appUrls } = services.sandbox;
  const wsBase = appUrls.websocketBase();

  /** The record with its attach address and a fresh single-use token. */
  const attachable = async (request: FastifyRequest, kind: ScopeKind, view: TerminalView) => {
    const { token, expiresInSeconds } = await terminals.issueAttachToken(principalOf(request), view);
    return {
      ...view,
      websocket_url: `${wsBase}${kind.connectPath(view, request.params as Record<string, string>)}`,
      connect_token: token,
      connect_token_expires_in: expiresInSeconds,
    };
  };

  for (const [name, kind] of Object.entries(SCOPES)) {
    const tags = ['pty'];
    const where = name === 'session' ? "in the session's VM (started if it has none)" : 'in the VM';
    const scopeOf = (request: FastifyRequest) => kind.scope(request.params as Record<string, string>);
    const base = `${kind.prefix}/pty/sessions`;

    app.post(
      base,
      {
        schema: {
          tags,
          summary: `Create a terminal ${where}`,
          description: `Starts a shell (or command) on a pseudo-terminal. ${ATTACH_PROTOCOL}`,
          security: BEARER_OR_API_KEY,
          params: kind.params,
          body: Type.Ref('PtyCreateRequest'),
          response: authedResponses({ 200: Type.Ref('PtySession') }, { 404: 'No such session or VM among yours', 410: 'The VM is no longer running' }),
        },
        onRequest: requireAuth,
      },
      async (request) => {
        const body = (request.body ?? {}) as PtyCreateBody;
        const view = await terminals.create(principalOf(request), scopeOf(request), {
          cols: body.cols ?? 80,
          rows: body.rows ?? 24,
          command: body.command,
          shell: body.shell,
          env: body.env,
          cwd: body.cwd,
          scrollbackBytes: body.scrollback_bytes,
        });
        return attachable(request, kind, view);
      },
    );
    app.get(
      base,
      {
        schema: {
          tags,
          summary: `List the terminals ${name === 'session' ? "of the session's VM" : 'of the VM'}`,
          security: BEARER_OR_API_KEY,
          params: kind.params,
          response: authedResponses({ 200: Type.Ref('PtySessionList') }, { 404: 'No such session or VM among yours', 410: 'The VM is no longer running' }),
        },
        onRequest: requireAuth,
      },
      async (request) => ({ sessions: await terminals.list(principalOf(request), scopeOf(request)) }),
    );
    app.get(
      `${base}/:pty_id`,
      {
        schema: {
          tags,
          summary: 'A terminal, with a fresh connect token',
          security: BEARER_OR_API_KEY,
          params: withPty(kind.params),
          response: authedResponses({ 200: Type.Ref('PtySession') }, { 404: 'No such terminal', 410: 'The VM is no longer running' }),
        },
        onRequest: requireAuth,
      },
      async (request) => attachable(request, kind, await terminals.get(principalOf(request), scopeOf(request), (request.params as { pty_id: string }).pty_id)),
    );
    app.get(
      `${base}/:pty_id/connect`,
      {
        schema: {
          tags,
          summary: 'Attach to a terminal (WebSocket)',
          description: `${ATTACH_PROTOCOL} Authenticate with X-API-Key / Authorization, or with ?token=<connect_token> (single use, ${ATTACH_TOKEN_TTL_SECONDS} s). Plain HTTP answers 426.`,
          security: [...BEARER_OR_API_KEY, {}],
          params: withPty(kind.params),
          querystring: Type.Object({ token: Type.Optional(Type.String()) }),
          response: authedResponses({}, { 426: 'Not a WebSocket handshake' }),
        },
      },
      async () => {
        throw new AppError('UPGRADE_REQUIRED', 'This is a WebSocket endpoint: connect with a WebSocket client (Upgrade: websocket)', { Upgrade: 'websocket' });
      },
    );
    app.delete(
      `${base}/:pty_id`,
      {
        schema: {
          tags,
          summary: 'Kill a terminal',
          description: 'Hangs up the terminal (SIGHUP, SIGKILL after 2 s) and forgets it; answers its final state.',
          security: BEARER_OR_API_KEY,
          params: withPty(kind.params),
          response: authedResponses({ 200: Type.Ref('PtySessionState') }, { 404: 'No such terminal', 410: 'The VM is no longer running' }),
        },
        onRequest: requireAuth,
      },
      async (request) => terminals.delete(principalOf(request), scopeOf(request), (request.params as { pty_id: string }).pty_id),
    );
    app.post(
      `${base}/:pty_id/resize`,
      {
        schema: {
          tags,
          summary: 'Resize a terminal',
          description: 'The program in it gets SIGWINCH. Attached clients may also send {"type":"resize"} over the WebSocket.',
          security: BEARER_OR_API_KEY,
          params: withPty(kind.params),
          body: Type.Ref('PtyResizeRequest'),
          response: authedResponses({ 200: Type.Ref('PtySessionState') }, { 404: 'No such terminal', 410: 'The VM is no longer running' }),
        },
        onRequest: requireAuth,
      },
      async (request) => {
        const { cols, rows } = request.body as { cols: number; rows: number };
        return terminals.resize(principalOf(request), scopeOf(request), (request.params as { pty_id: string }).pty_id, cols, rows);
      },
    );
  }
}
