/** POST /v1/vms/{vm_id}/lifetime: the VM now ends a given number of seconds from now (E2B's `setTimeout`). */
import { Type } from 'typebox';
import { MAX_LIFETIME_SECONDS } from '../../../core/vms/lifetime.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVmRecord } from '../sessions/schemas.ts';
import { VmIdParams } from './params.ts';

export function registerVmLifetime(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/vms/:vm_id/lifetime',
    {
      schema: {
        tags: ['vms'],
        summary: "Change a VM's lifetime",
        description:
          'The VM now ends `lifetime_seconds` from now, sooner or later than it would have (its end reason is then `lifetime`, with its pre-stop hook run first). ' +
          'A paused VM gets that much lifetime left, counted from its resume. Its session is not changed: a VM the session starts later gets the ' +
          "session's `vm_lifetime_seconds`. The answer is the VM's record, with its new `expires_at`.",
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        body: Type.Object(
          {
            lifetime_seconds: Type.Integer({
              minimum: 1,
              maximum: MAX_LIFETIME_SECONDS,
              description: `Seconds from now until the VM ends: 1 to ${MAX_LIFETIME_SECONDS} (30 days)`,
            }),
          },
          { additionalProperties: false },
        ),
        response: authedResponses(
          { 200: Type.Ref('VmRecord') },
          {
            404: 'No such VM among yours',
            409: 'The VM has ended or is still starting',
            503: 'The VM runs on another node: send the request to that node',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) =>
      toVmRecord(await services.sandbox.vms.setLifetime(principalOf(request), request.params.vm_id, request.body.lifetime_seconds), services.clock.now()),
  );
}
