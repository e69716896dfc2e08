/**
 * E2B's control plane under `/e2b` (`E2B_API_URL=<public URL>/e2b`): sandboxes as sandboxd sessions, with E2B's
 * request and answer shapes and its error body. Authentication is sandboxd's: the SDK's `X-API-KEY` is any sandboxd
 * API key of the caller's. Routes are hidden from sandboxd's own OpenAPI document: their contract is E2B's.
 */
import type { App, RouteContext } from '../../types.ts';
import { sendE2bError } from '../errors.ts';
import { registerCreateSandbox } from './create.ts';
import { registerGetSandbox } from './get.ts';
import { registerConnectSandbox } from './connect.ts';
import { registerKillSandbox } from './kill.ts';
import { registerListSandboxes } from './list.ts';
import { registerSandboxMetrics } from './metrics.ts';
import { registerPauseSandbox } from './pause.ts';
import { registerSandboxSnapshots } from './snapshots.ts';
import { registerSandboxTimeout } from './timeout.ts';

export const CONTROL_PLANE_PREFIX = '/e2b';

export function registerControlPlane(app: App, context: RouteContext): void {
  app.register(
    async (plane) => {
      plane.setErrorHandler((error, request, reply) => sendE2bError(error, request, reply));
      plane.setNotFoundHandler((request, reply) => reply.code(404).send({ code: 404, message: `No route ${request.method} ${request.url.split('?')[0]}` }));
      const scoped = plane as unknown as App;
      registerCreateSandbox(scoped, context);
      registerGetSandbox(scoped, context);
      registerKillSandbox(scoped, context);
      registerListSandboxes(scoped, context);
      registerSandboxTimeout(scoped, context);
      registerPauseSandbox(scoped, context);
      registerConnectSandbox(scoped, context);
      registerSandboxMetrics(scoped, context);
      registerSandboxSnapshots(scoped, context);
    },
    { prefix: CONTROL_PLANE_PREFIX },
  );
}
