/** DELETE /sandboxes/{sandboxID}: kills the sandbox's VM (a paused one's saved state goes too); 204, or 404. */
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { ownedSandbox } from './owned-sandbox.ts';
import { SandboxParams } from './schemas.ts';

export function registerKillSandbox(app: App, { services, requireAuth }: RouteContext): void {
  app.delete('/sandboxes/:sandboxID', { schema: { hide: true, params: SandboxParams }, onRequest: requireAuth }, async (request, reply) => {
    const principal = principalOf(request);
    const { vm } = await ownedSandbox(services, principal, request.params.sandboxID);
    await services.sandbox.vms.kill(principal, vm);
    return reply.code(204).send();
  });
}
