/** Webhook endpoints and their deliveries. */
import type {
  WebhookDelivery,
  WebhookDeliveryDetails,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointChanges,
  WebhookEndpointInput,
  WebhookSecretRotation,
  WebhookVerification,
} from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';
import { cursorPages, type PagedList } from '../pagination.ts';

class WebhookEndpoints {
  constructor(private readonly transport: Transport) {}

  /** Registers an endpoint; the answer's `secret` (whsec_…) is shown this once. */
  create(input: WebhookEndpointInput, options: CallOptions = {}): Promise<WebhookEndpoint> {
    return this.transport.call('/v1/webhooks/endpoints', 'post', { json: input, signal: options.signal });
  }
  list(options: CallOptions = {}): Promise<WebhookEndpoint[]> {
    return this.transport.call('/v1/webhooks/endpoints', 'get', { signal: options.signal });
  }
  get(endpointId: string, options: CallOptions = {}): Promise<WebhookEndpoint> {
    return this.transport.call('/v1/webhooks/endpoints/{endpoint_id}', 'get', { params: { endpoint_id: endpointId }, signal: options.signal });
  }
  update(endpointId: string, changes: WebhookEndpointChanges, options: CallOptions = {}): Promise<WebhookEndpoint> {
    return this.transport.call('/v1/webhooks/endpoints/{endpoint_id}', 'patch', { params: { endpoint_id: endpointId }, json: changes, signal: options.signal });
  }
  delete(endpointId: string, options: CallOptions = {}) {
    return this.transport.call('/v1/webhooks/endpoints/{endpoint_id}', 'delete', { params: { endpoint_id: endpointId }, signal: options.signal });
  }
  /** Sends a `webhook.test` event; answers the delivery after its first attempt. */
  test(endpointId: string, options: CallOptions = {}): Promise<WebhookDelivery> {
    return this.transport.call('/v1/webhooks/endpoints/{endpoint_id}/test', 'post', { params: { endpoint_id: endpointId }, signal: options.signal });
  }
  rotateSecret(endpointId: string, options: CallOptions = {}): Promise<WebhookSecretRotation> {
    return this.transport.call('/v1/webhooks/endpoints/{endpoint_id}/rotate-secret', 'post', { params: { endpoint_id: endpointId }, signal: options.signal });
  }
  /** Sends a signed challenge and says whether the receiver accepted it. */
  verify(endpointId: string, options: CallOptions = {}): Promise<WebhookVerification> {
    return this.transport.call('/v1/webhooks/endpoints/{endpoint_id}/verify', 'post', { params: { endpoint_id: endpointId }, signal: options.signal });
  }
}

class WebhookDeliveries {
  constructor(private readonly transport: Transport) {}

  /** Deliveries, newest first: await it for a page (pass `next_cursor` back as `cursor`), or `for await` over all. */
  list(
    options: { endpointId?: string; status?: string; eventType?: string; cursor?: string; limit?: number } & CallOptions = {},
  ): PagedList<WebhookDeliveryList['items'][number], WebhookDeliveryList> {
    return cursorPages(
      options.cursor,
      (cursor) => this.fetchDeliveries({ ...options, cursor }),
      (page) => page.items,
    );
  }

  private fetchDeliveries(options: {
    endpointId?: string;
    status?: string;
    eventType?: string;
    cursor?: string | undefined;
    limit?: number;
    signal?: AbortSignal | undefined;
  }): Promise<WebhookDeliveryList> {
    return this.transport.call('/v1/webhooks/deliveries', 'get', {
      query: { endpoint_id: options.endpointId, status: options.status, event_type: options.eventType, cursor: options.cursor, limit: options.limit },
      signal: options.signal,
    });
  }
  /** One delivery with every attempt. */
  get(deliveryId: string, options: CallOptions = {}): Promise<WebhookDeliveryDetails> {
    return this.transport.call('/v1/webhooks/deliveries/{delivery_id}', 'get', { params: { delivery_id: deliveryId }, signal: options.signal });
  }
  replay(deliveryId: string, options: CallOptions = {}) {
    return this.transport.call('/v1/webhooks/deliveries/{delivery_id}/replay', 'post', { params: { delivery_id: deliveryId }, signal: options.signal });
  }
}

export class Webhooks {
  readonly endpoints: WebhookEndpoints;
  readonly deliveries: WebhookDeliveries;
  constructor(transport: Transport) {
    this.endpoints = new WebhookEndpoints(transport);
    this.deliveries = new WebhookDeliveries(transport);
  }
}
