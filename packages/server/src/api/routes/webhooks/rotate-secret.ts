/** POST /v1/webhooks/endpoints/{endpoint_id}/rotate-secret: a new signing secret; the old one signs too for the grace period. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { EndpointIdParams } from './schemas.ts';

export function registerRotateSecret(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/webhooks/endpoints/:endpoint_id/rotate-secret',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Rotate the signing secret',
        description:
          'Returns the new secret (shown only here). Until SANDBOXD_WEBHOOK_SECRET_GRACE_SECONDS have passed (default 24 h), requests carry two signatures in webhook-signature, one per secret, so the receiver can switch at its own pace.',
        security: BEARER_OR_API_KEY,
        params: EndpointIdParams,
        response: authedResponses({ 200: Type.Ref('WebhookSecretRotation') }, { 404: 'No such endpoint among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const rotated = await services.webhooks.rotateSecret(principalOf(request).userId, request.params.endpoint_id, auditActorOf(request));
      return { endpoint_id: rotated.endpointId, secret: rotated.secret };
    },
  );
}
