/**
 * The preview proxy: `/v1/app/{session_id}/{port}/…`, the host names `{vm_id}-{port}.<app domain>` and
 * verified custom domains reach a port inside a VM through its agent's tunnels (a custom domain of a deployed
 * app reaches the app like its own host does, `app-host.ts`). HTTP requests are Fastify
 * routes (bodies are streamed, not parsed); WebSocket upgrades come through the upgrade router. Who may pass
 * is decided in `core/previews.ts`; where a custom domain goes, in `core/custom-domains.ts`.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { stringifySetCookie } from 'cookie';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppUrls, HostTarget } from '../../core/app-urls.ts';
import type { CustomDomainHosts } from '../../core/custom-domain-hosts.ts';
import { hostnameOf } from '../../core/custom-domain-names.ts';
import { notFound } from '../../core/errors.ts';
import { PREVIEW_COOKIE, type PreviewAccess, type PreviewTarget } from '../../core/previews.ts';
import { BEARER_OR_API_KEY, byMediaType } from '../schemas/common.ts';
import type { App, RouteContext } from '../types.ts';
import type { UpgradeHandler } from '../upgrade-router.ts';
import { APP_HOST_PREFIX, appHostTargets, serveAppHost, upgradeAppHost } from './app-host.ts';
import { sendDesktopViewerPage } from './desktop-viewer-page.ts';
import { forwardHttp } from './forward-http.ts';
import { forwardUpgrade } from './forward-upgrade.ts';
import { forwardedHeaders, previewCredentials, withoutLinkToken } from './preview-request.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];
/** Where host-name previews are routed internally (see {@link previewHostRewriter}); not reachable by path. */
const HOST_PREVIEW_PREFIX = '/_sandboxd/preview-host';
/** Where requests to verified custom domains are routed internally; not reachable by path either. */
const CUSTOM_DOMAIN_PREFIX = '/_sandboxd/custom-domain';
// The port as a canonical decimal (no leading zeros), like every number in a path.
const PATH_PREVIEW = /^\/v1\/app\/([^/?]+)\/([1-9][0-9]{0,4})(\/[^?]*)?(\?.*)?$/;

const hostTargets = new WeakMap<IncomingMessage, HostTarget>();
/** The custom domain (normalized host name) a request was routed for. */
const domainTargets = new WeakMap<IncomingMessage, string>();

/** The Host a request names: its first X-Forwarded-Host behind a trusted proxy, else its Host header. */
export function hostOf(request: IncomingMessage, trustProxy: boolean): string | undefined {
  const forwarded = trustProxy ? request.headers['x-forwarded-host'] : undefined;
  const value = typeof forwarded === 'string' ? forwarded.split(',')[0]!.trim() : request.headers.host;
  return value;
}

/**
 * Fastify's `rewriteUrl`: a request whose Host is a preview host name, or a custom domain this node knows
 * verified, is routed to the host-preview or custom-domain route whatever its path (the app lives at `/`);
 * the original URL stays in `request.originalUrl`. `rewriteUrl` is synchronous, so custom domains are
 * looked up in the node's in-memory set (`CustomDomainHosts`); the route then re-reads the claim from the
 * store, which is the authority (a domain deleted on another node answers 404 there at once). Every other
 * Host reaches the API exactly as before.
 */
export function previewHostRewriter(urls: AppUrls, trustProxy: boolean, domains: CustomDomainHosts): (request: IncomingMessage) => string {
  return (request) => {
    const host = hostOf(request, trustProxy);
    const target = urls.parseHost(host);
    if (target) {
      hostTargets.set(request, target);
      return `${HOST_PREVIEW_PREFIX}/${target.vmId}/${target.port}`;
    }
    const appLabel = urls.parseAppHost(host);
    if (appLabel) {
      appHostTargets.set(request, appLabel);
      return APP_HOST_PREFIX;
    }
    const domain = customDomainOf(host, domains);
    if (!domain) return request.url ?? '/';
    domainTargets.set(request, domain);
    return CUSTOM_DOMAIN_PREFIX;
  };
}

/** The verified custom domain a Host names, as far as this node's set knows, or null. */
function customDomainOf(host: string | undefined, domains: CustomDomainHosts): string | null {
  const name = hostnameOf(host);
  return name !== null && domains.has(name) ? name : null;
}

function queryOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? '' : url.slice(q + 1);
}

/** The one path a viewer grant opens (the URL GET /v1/computeruse/{id}/viewer-url hands out). */
const VIEWER_PAGE_PATH = '/vnc.html';

/**
 * A viewer grant's answer: sandboxd's own viewer page at {@link VIEWER_PAGE_PATH}, and nothing of the VM's
 * port 6080 (its page would run on the console's origin with the owner's cookies: finding H-3).
 */
async function serveViewer(request: FastifyRequest, reply: FastifyReply, upstreamPath: string): Promise<FastifyReply> {
  const path = upstreamPath.split('?', 1)[0];
  if ((request.method === 'GET' || request.method === 'HEAD') && path === VIEWER_PAGE_PATH) return sendDesktopViewerPage(reply);
  throw notFound(
    `${path} of the desktop viewer (a viewer link opens ${VIEWER_PAGE_PATH} only, which the server serves; its WebSocket is /v1/computeruse/{session_id}/vnc/websockify)`,
  );
}

/** Serves one HTTP request of a preview: authorize, exchange a link for a cookie, forward (or the viewer page). */
async function servePreview(
  previews: PreviewAccess,
  urls: AppUrls,
  request: FastifyRequest,
  reply: FastifyReply,
  target: PreviewTarget,
  upstreamPath: string,
  prefix: string | null,
): Promise<FastifyReply> {
  const grant = await previews.authorize(target, previewCredentials(request.headers, queryOf(request.originalUrl)));
  if (grant.via === 'owner') request.principal = grant.principal;
  if (grant.via === 'viewer' && grant.fromLink) {
    const cookie = await previews.viewerCookieFor(grant.viewer);
    reply.header(
      'set-cookie',
      stringifySetCookie({
        name: PREVIEW_COOKIE,
        value: cookie.value,
        expires: cookie.expiresAt,
        path: prefix ?? '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: urls.secure,
      }),
    );
    if (request.method === 'GET' || request.method === 'HEAD') {
      // The fragment (the VNC token, `#token=…`) is kept by the browser across the redirect.
      return reply.code(302).header('location', withoutLinkToken(request.originalUrl)).header('cache-control', 'no-store').send();
    }
  }
  if (grant.via === 'viewer') return serveViewer(request, reply, upstreamPath);
  if (grant.via === 'share_link') {
    const cookie = await previews.cookieFor(grant.share);
    reply.header(
      'set-cookie',
      stringifySetCookie({
        name: PREVIEW_COOKIE,
        value: cookie.value,
        expires: cookie.expiresAt,
        path: prefix ?? '/',
        httpOnly: true,
        sameSite: 'lax',
        secure: urls.secure,
      }),
    );
    if (request.method === 'GET' || request.method === 'HEAD') {
      // The token leaves the address bar (and Referer headers); the cookie carries access from here on.
      return reply.code(302).header('location', withoutLinkToken(request.originalUrl)).header('cache-control', 'no-store').send();
    }
  }
  const tunnel = await previews.connect(grant);
  const headers = forwardedHeaders(request.raw, { remoteAddress: request.ip, protocol: request.protocol, prefix, upgrade: false });
  // Pages under /v1/app/… share the API's origin with the web console: they run sandboxed and may set no
  // browser state there (forward-http.ts, response-headers.ts). Host names and custom domains are the app's own.
  return forwardHttp(request, reply, tunnel, withoutLinkToken(upstreamPath), headers, prefix !== null ? 'shared' : 'own');
}

export function registerPreviewRoutes(app: App, { services }: RouteContext): void {
  const { previews, appUrls, customDomains } = services.sandbox;
  const description =
    "Forwards any request (bodies streamed both ways) and WebSocket upgrades to the port inside the session's VM, at the path after the port. Allowed: the owner (X-API-Key or bearer), anyone when a public share exists for the port, holders of a private share link (`?sandboxd_token=`, exchanged for an HttpOnly cookie scoped to this preview and a redirect to the clean URL). " +
    "Whoever is let in, the app never receives sandboxd's credentials: every sandboxd cookie (`sandboxd_*`, also with the `__Host-`/`__Secure-` prefix), X-API-Key, X-CSRF-Token, the cluster's `X-Sandboxd-*` headers and an Authorization that carries a sandboxd API key or token are removed (the app's own cookies and Authorization pass). " +
    "These paths share the web console's origin, so they are sandboxed and stateless: every answer carries `Content-Security-Policy: sandbox …` (no allow-same-origin), and the app's Set-Cookie, Clear-Site-Data, Service-Worker-Allowed, Refresh, Strict-Transport-Security, Alt-Svc, NEL/Report-To/Reporting-Endpoints, Accept-CH/Critical-CH, Set-Login, Origin-Agent-Cluster and similar origin-wide headers are dropped, on WebSocket handshakes too. Apps that need cookies or storage use `direct_url` (their own host name) or a custom domain, where Set-Cookie passes host-only (its Domain attribute removed). " +
    "A desktop viewer link (GET /v1/computeruse/{session_id}/viewer-url) opens sandboxd's own viewer page at `6080/vnc.html`, never the VM's. " +
    '502 APP_PORT_UNREACHABLE when nothing listens on the port, 410 VM_GONE when the VM was killed or expired.';
  void app.register(async (scope) => {
    // Bodies are the app's business: stream them through instead of parsing (and no body limit applies).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

    const params = Type.Object({ session_id: Type.String(), port: Type.Integer({ minimum: 1, maximum: 65535 }), '*': Type.Optional(Type.String()) });
    const schema = {
      tags: ['apps'],
      summary: 'Preview proxy to a port inside the VM',
      description,
      security: [...BEARER_OR_API_KEY, {}],
      params,
      // Any status may be the app's own, so the operation declares one catch-all answer; sandboxd's own are named in it.
      response: {
        default: byMediaType(
          "The app's answer, passed through as it is (any status, headers and body); or sandboxd's own: 302 exchanging a share link for a cookie, 308 adding the slash after the port, and the errors (JSON ErrorResponse) 401, 404 (no such session among yours, or no VM yet), 410 VM_GONE, 422 and 502 APP_PORT_UNREACHABLE",
          { '*/*': Type.Unknown() },
        ),
      },
    };
    const handler = async (request: FastifyRequest<{ Params: { session_id: string; port: number } }>, reply: FastifyReply) => {
      const { session_id: sessionId, port } = request.params;
      const prefix = appUrls.pathPrefix(sessionId, port);
      const rest = PATH_PREVIEW.exec(request.raw.url ?? '')?.[3];
      if (rest === undefined) {
        // `/v1/app/{id}/{port}` → `…/{port}/`, so the app's relative links resolve under the prefix.
        const query = queryOf(request.raw.url ?? '');
        return reply
          .code(308)
          .header('location', `${prefix}/${query ? `?${query}` : ''}`)
          .send();
      }
      const query = queryOf(request.raw.url ?? '');
      return servePreview(previews, appUrls, request, reply, { kind: 'path', sessionId, port }, `${rest}${query ? `?${query}` : ''}`, prefix);
    };
    scope.route({ method: METHODS, url: '/v1/app/:session_id/:port', schema, handler });
    scope.route({ method: METHODS, url: '/v1/app/:session_id/:port/*', schema, handler });

    scope.route({
      method: METHODS,
      url: `${HOST_PREVIEW_PREFIX}/*`,
      schema: { hide: true },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const target = hostTargets.get(request.raw);
        if (!target) throw notFound(`route ${request.method} ${request.url.split('?')[0]}`);
        return servePreview(previews, appUrls, request, reply, { kind: 'host', ...target }, request.originalUrl, null);
      },
    });

    scope.route({
      method: METHODS,
      url: APP_HOST_PREFIX,
      schema: { hide: true },
      handler: (request, reply) => serveAppHost(services.sandbox.apps, request, reply),
    });

    scope.route({
      method: METHODS,
      url: CUSTOM_DOMAIN_PREFIX,
      schema: { hide: true },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const domain = domainTargets.get(request.raw);
        if (!domain) throw notFound(`route ${request.method} ${request.url.split('?')[0]}`);
        // The store decides: a claim deleted (or a share expired) since the set was loaded is a 404 here.
        const target = await customDomains.targetOf(domain);
        if (target.kind === 'app') return serveAppHost(services.sandbox.apps, request, reply, { appId: target.appId });
        return servePreview(previews, appUrls, request, reply, target, request.originalUrl, null);
      },
    });
  });
}

interface PreviewUpgradeClaim {
  /** The preview, the custom domain whose preview the store names (resolved when handled), or an app's host. */
  target: PreviewTarget | { kind: 'custom_domain'; domain: string } | { kind: 'app'; label: string };
  upstreamPath: string;
  prefix: string | null;
}

/** WebSocket upgrades to previews (by path, host name or custom domain), forwarded to the app as they are. */
export function previewUpgradeHandler(services: RouteContext['services']): UpgradeHandler<PreviewUpgradeClaim> {
  const { previews, appUrls, customDomains } = services.sandbox;
  return {
    claim(request) {
      const url = request.url ?? '/';
      const hostHeader = hostOf(request, services.config.server.trustProxy);
      const host = appUrls.parseHost(hostHeader);
      if (host) return { target: { kind: 'host', ...host }, upstreamPath: url, prefix: null };
      const appLabel = appUrls.parseAppHost(hostHeader);
      if (appLabel) return { target: { kind: 'app', label: appLabel }, upstreamPath: url, prefix: null };
      const domain = customDomainOf(hostHeader, services.customDomainHosts);
      if (domain) return { target: { kind: 'custom_domain', domain }, upstreamPath: url, prefix: null };
      const match = PATH_PREVIEW.exec(url);
      if (!match) return null;
      const port = Number(match[2]);
      const sessionId = decodeURIComponent(match[1]!);
      return {
        target: { kind: 'path', sessionId, port },
        upstreamPath: `${match[3] ?? '/'}${match[4] ?? ''}`,
        prefix: appUrls.pathPrefix(sessionId, port),
      };
    },
    async handle(request, socket: Duplex, head, claim) {
      const encrypted = (socket as { encrypted?: boolean }).encrypted === true;
      if (claim.target.kind === 'app') {
        return upgradeAppHost(services.sandbox.apps, { hostLabel: claim.target.label }, request, socket, head, encrypted ? 'https' : 'http');
      }
      const target = claim.target.kind === 'custom_domain' ? await customDomains.targetOf(claim.target.domain) : claim.target;
      if (target.kind === 'app') return upgradeAppHost(services.sandbox.apps, { appId: target.appId }, request, socket, head, encrypted ? 'https' : 'http');
      if (target.port < 1 || target.port > 65535) throw notFound(`port ${target.port}`);
      // A link token is accepted as is here: a handshake cannot follow a redirect or keep a cookie.
      const grant = await previews.authorize(target, previewCredentials(request.headers, queryOf(request.url ?? '')));
      if (grant.via === 'viewer') {
        throw notFound(
          "a WebSocket of the desktop viewer page (a viewer link reaches nothing in the VM; the viewer's WebSocket is /v1/computeruse/{session_id}/vnc/websockify)",
        );
      }
      const tunnel = await previews.connect(grant);
      const forwardedProto =
        services.config.server.trustProxy && typeof request.headers['x-forwarded-proto'] === 'string' ? request.headers['x-forwarded-proto'] : null;
      const headers = forwardedHeaders(request, {
        remoteAddress: request.socket.remoteAddress,
        protocol: forwardedProto ?? (encrypted ? 'https' : 'http'),
        prefix: claim.prefix,
        upgrade: true,
      });
      forwardUpgrade(request, socket, head, tunnel, withoutLinkToken(claim.upstreamPath), headers, claim.prefix !== null ? 'shared' : 'own');
    },
  };
}
