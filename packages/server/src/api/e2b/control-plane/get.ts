/** GET /sandboxes/{sandboxID}: a running or paused sandbox of the caller's (404 for anything else). */
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { ownedSandbox } from './owned-sandbox.ts';
import { sandboxDetail } from './sandbox-view.ts';
import { SandboxParams } from './schemas.ts';

export function registerGetSandbox(app: App, { services, requireAuth }: RouteContext): void {
  app.get('/sandboxes/:sandboxID', { schema: { hide: true, params: SandboxParams }, onRequest: requireAuth }, async (request) => {
    const { session, vm } = await ownedSandbox(services, principalOf(request), request.params.sandboxID);
    return sandboxDetail(services, session, vm);
  });
}
