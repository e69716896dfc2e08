/**
 * A sandbox's own ports (any but the daemon's and the code interpreter's), as `getHost(port)` and the base URL
 * reach them: forwarded to the port inside the VM by the preview proxy's forwarders, over the agent's tunnels
 * (nothing on the host listens per VM). Admission is E2B's: public traffic, or the traffic token (access.ts).
 * What reaches the app is what reaches any preview: no sandboxd credential (the E2B tokens included), whatever
 * let the request in. Host names are the app's own origin; through the base URL the app answers on the API's
 * origin, so it is sandboxed there like a path preview.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../core/errors.ts';
import type { PreviewGrant } from '../../../core/previews.ts';
import type { Services } from '../../../services.ts';
import { forwardHttp } from '../../preview/forward-http.ts';
import { forwardUpgrade } from '../../preview/forward-upgrade.ts';
import { forwardedHeaders } from '../../preview/preview-request.ts';
import { hostOf } from '../../preview/proxy-routes.ts';
import type { App } from '../../types.ts';
import type { UpgradeHandler } from '../../upgrade-router.ts';
import { admitToPort, type SandboxCaller } from './access.ts';
import { INTERNAL_PREFIX, SANDBOX_BASE_PATH, sandboxTrafficRewriter, targetOf, type SandboxTarget } from './rewrite.ts';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The path and query the app sees: the request's own for a host name, the part after the base path for the base URL. */
function upstreamPathOf(target: SandboxTarget, originalUrl: string): string {
  if (target.via === 'host') return originalUrl;
  const rest = originalUrl.slice(SANDBOX_BASE_PATH.length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

/** A tunnel to the target port of the admitted caller's sandbox: 404 without a VM, 410 when it is not running. */
async function tunnelFor(services: Services, caller: SandboxCaller): Promise<Duplex> {
  const { vm } = await services.sandbox.sessions.getOwnedWithVm(caller.principal, caller.session.id);
  const grant: PreviewGrant = { session: caller.session, vm, port: caller.target.port, via: 'owner', principal: caller.principal };
  return services.sandbox.previews.connect(grant);
}

export function registerAppProxy(app: App, services: Services): void {
  app.register(async (scope) => {
    // Bodies are the app's: streamed through, never parsed.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const target = targetOf(request.raw);
      if (!target || target.kind !== 'app') throw new AppError('NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`);
      const caller = await admitToPort(services, target, request.headers);
      const tunnel = await tunnelFor(services, caller);
      const headers = forwardedHeaders(request.raw, { remoteAddress: request.ip, protocol: request.protocol, prefix: null, upgrade: false });
      return forwardHttp(request, reply, tunnel, upstreamPathOf(target, request.originalUrl), headers, target.via === 'host' ? 'own' : 'shared');
    };
    scope.route({ method: METHODS, url: `${INTERNAL_PREFIX}/app`, schema: { hide: true }, handler });
    scope.route({ method: METHODS, url: `${INTERNAL_PREFIX}/app/*`, schema: { hide: true }, handler });
  });
}

/** WebSocket upgrades to a sandbox's app ports (upgrades bypass Fastify's rewriter, so the target is read here). */
export function sandboxAppUpgradeHandler(services: Services): UpgradeHandler<{ target: SandboxTarget; path: string }> {
  const rewrite = sandboxTrafficRewriter(services.config.domains.appDomain);
  return {
    claim(request: IncomingMessage) {
      const originalUrl = request.url ?? '/';
      if (rewrite(request, hostOf(request, services.config.server.trustProxy)) === null) return null;
      const target = targetOf(request);
      if (!target || target.kind !== 'app') return null;
      return { target, path: upstreamPathOf(target, originalUrl) };
    },
    async handle(request, socket, head, claim) {
      const caller = await admitToPort(services, claim.target, request.headers);
      const tunnel = await tunnelFor(services, caller);
      const encrypted = (socket as { encrypted?: boolean }).encrypted === true;
      const headers = forwardedHeaders(request, {
        remoteAddress: request.socket.remoteAddress,
        protocol: encrypted ? 'https' : 'http',
        prefix: null,
        upgrade: true,
      });
      forwardUpgrade(request, socket, head, tunnel, claim.path, headers, claim.target.via === 'host' ? 'own' : 'shared');
    },
  };
}
