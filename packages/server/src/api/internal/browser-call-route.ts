/**
 * POST /internal/v1/browser/call: another node received a call for a browser session whose page this node holds
 * (core/cluster/browser-router.ts). Only a request signed with the cluster secret is served; the call was
 * validated by the receiving node's public route and runs here on the local service, with the principal that
 * node authenticated (so ownership is checked here again). Hidden from the OpenAPI document: no user calls it.
 */
import { Type } from 'typebox';
import { REMOTE_BROWSER_PATH, SESSION_BOUND_CALLS, type SessionBoundCall } from '../../core/cluster/browser-router.ts';
import type { App, RouteContext } from '../types.ts';
import { SignedPrincipal } from './signed-principal.ts';

const Body = Type.Object({
  principal: SignedPrincipal,
  call: Type.Union(SESSION_BOUND_CALLS.map((name) => Type.Literal(name))),
  args: Type.Array(Type.Unknown(), { maxItems: 1 }),
});

export function registerInternalBrowserCallRoute(app: App, { services }: RouteContext): void {
  app.post(
    REMOTE_BROWSER_PATH,
    {
      schema: { hide: true, body: Body },
      onRequest: async (request) => void services.internalAuth.verify(request.method, request.url, request.headers),
    },
    async (request) => {
      const { principal, call, args } = request.body;
      const service = services.sandbox.browserService;
      const method = service[call as SessionBoundCall] as (p: typeof principal, ...a: unknown[]) => Promise<unknown>;
      return method.call(service, principal, ...args);
    },
  );
}
