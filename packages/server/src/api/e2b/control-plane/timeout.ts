/**
 * POST /sandboxes/{sandboxID}/timeout (`setTimeout`): the sandbox ends `timeout` seconds from now, sooner or later
 * than it would have (a paused one: that long after it resumes). POST /sandboxes/{sandboxID}/refreshes: it lives at
 * least `duration` more seconds, never less. Both 204; 404 for no running or paused sandbox of the caller's.
 */
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { extendTimeoutOf, setTimeoutOf } from './lifetime.ts';
import { ownedSandbox } from './owned-sandbox.ts';
import { absentBodyAsEmpty, RefreshBody, SandboxParams, SetTimeoutBody } from './schemas.ts';

/** E2B's refresh when the body names no duration. */
const DEFAULT_REFRESH_SECONDS = 60;

export function registerSandboxTimeout(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/sandboxes/:sandboxID/timeout',
    { schema: { hide: true, params: SandboxParams, body: SetTimeoutBody }, onRequest: requireAuth },
    async (request, reply) => {
      const principal = principalOf(request);
      const { vm } = await ownedSandbox(services, principal, request.params.sandboxID);
      await setTimeoutOf(services, principal, vm, request.body.timeout);
      return reply.code(204).send();
    },
  );

  app.post(
    '/sandboxes/:sandboxID/refreshes',
    { schema: { hide: true, params: SandboxParams, body: RefreshBody }, onRequest: requireAuth, preValidation: absentBodyAsEmpty },
    async (request, reply) => {
      const principal = principalOf(request);
      const { vm } = await ownedSandbox(services, principal, request.params.sandboxID);
      await extendTimeoutOf(services, principal, vm, request.body.duration ?? DEFAULT_REFRESH_SECONDS);
      return reply.code(204).send();
    },
  );
}
