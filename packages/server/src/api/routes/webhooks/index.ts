import type { App, RouteContext } from '../../types.ts';
import { registerCreateEndpoint } from './create-endpoint.ts';
import { registerDeleteEndpoint } from './delete-endpoint.ts';
import { registerGetDelivery } from './get-delivery.ts';
import { registerGetEndpoint } from './get-endpoint.ts';
import { registerListDeliveries } from './list-deliveries.ts';
import { registerListEndpoints } from './list-endpoints.ts';
import { registerReplayDelivery } from './replay-delivery.ts';
import { registerRotateSecret } from './rotate-secret.ts';
import { registerTestEndpoint } from './test-endpoint.ts';
import { registerUpdateEndpoint } from './update-endpoint.ts';
import { registerVerifyEndpoint } from './verify-endpoint.ts';

export function registerWebhookRoutes(app: App, context: RouteContext): void {
  registerCreateEndpoint(app, context);
  registerListEndpoints(app, context);
  registerGetEndpoint(app, context);
  registerUpdateEndpoint(app, context);
  registerDeleteEndpoint(app, context);
  registerRotateSecret(app, context);
  registerTestEndpoint(app, context);
  registerVerifyEndpoint(app, context);
  registerListDeliveries(app, context);
  registerGetDelivery(app, context);
  registerReplayDelivery(app, context);
}
