/** GET /sandboxes/{sandboxID}: a running or paused sandbox of the caller's (404 for anything else). */
import { notFound } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { sandboxDetail } from './sandbox-view.ts';
import { SandboxParams } from './schemas.ts';

export function registerGetSandbox(app: App, { services, requireAuth }: RouteContext): void {
  app.get('/sandboxes/:sandboxID', { schema: { hide: true, params: SandboxParams }, onRequest: requireAuth }, async (request) => {
    const { sandboxID } = request.params;
    const { session, vm } = await services.sandbox.sessions.getOwnedWithVm(principalOf(request), sandboxID);
    const detail = sandboxDetail(services, session, vm);
    if (!detail) throw notFound(`sandbox ${sandboxID}`);
    return detail;
  });
}
