/**
 * Requests to a deployed app's host (`<name>--<handle>.<app domain>`, core/apps), or to a verified custom
 * domain that serves an app: the app's live replica (round robin) is looked up in the store on every request,
 * so a switch of versions takes effect at the next one. The app's own origin, like `{vm_id}-{port}` hosts and
 * other custom domains: the same header filtering, no sandboxd credential ever reaches it, nothing of the
 * console's authority.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppRef, AppService } from '../../core/apps/app-service.ts';
import { notFound } from '../../core/errors.ts';
import { forwardHttp } from './forward-http.ts';
import { forwardUpgrade } from './forward-upgrade.ts';
import { forwardedHeaders, previewCredentials } from './preview-request.ts';

/** Where app hosts are routed internally (see previewHostRewriter); not reachable by path. */
export const APP_HOST_PREFIX = '/_sandboxd/app-host';

/** The app host label a request was routed for. */
export const appHostTargets = new WeakMap<IncomingMessage, string>();

function queryOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}

/**
 * Serves one HTTP request to an app: the app whose host the request was routed for, or `ref` (the app of a
 * custom domain).
 */
export async function serveAppHost(apps: AppService, request: FastifyRequest, reply: FastifyReply, ref?: AppRef): Promise<FastifyReply> {
  const label = appHostTargets.get(request.raw);
  const app = ref ?? (label ? { hostLabel: label } : null);
  if (!app) throw notFound(`route ${request.method} ${request.url.split('?')[0]}`);
  const { credential } = previewCredentials(request.headers, queryOf(request.originalUrl));
  const tunnel = await apps.connect(app, credential);
  const headers = forwardedHeaders(request.raw, { remoteAddress: request.ip, protocol: request.protocol, prefix: null, upgrade: false });
  return forwardHttp(request, reply, tunnel, request.originalUrl, headers, 'own');
}

/** Forwards a WebSocket upgrade to an app (by its host, or a custom domain's app). */
export async function upgradeAppHost(apps: AppService, app: AppRef, request: IncomingMessage, socket: Duplex, head: Buffer, protocol: string): Promise<void> {
  const { credential } = previewCredentials(request.headers, queryOf(request.url ?? ''));
  const tunnel = await apps.connect(app, credential);
  const headers = forwardedHeaders(request, { remoteAddress: request.socket.remoteAddress, protocol, prefix: null, upgrade: true });
  forwardUpgrade(request, socket, head, tunnel, request.url ?? '/', headers, 'own');
}
