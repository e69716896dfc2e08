/** GET /v1/vms/{vm_id}/egress/log: a VM's connection attempts, allowed and refused, newest first. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, StringEnum } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { VmIdParams } from '../vms/params.ts';
import { toEgressLogEntryRecord } from './schemas.ts';

export function registerEgressLog(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/vms/:vm_id/egress/log',
    {
      schema: {
        tags: ['egress'],
        summary: "A VM's egress log",
        description:
          'Every connection attempt of the VM while a restricted egress policy applied to it: DNS names refused, HTTP and HTTPS connections (with the name asked for and the bytes each way), other connections (first packet). Kept for SANDBOXD_EGRESS_LOG_RETENTION_DAYS. Newest first; pass next_cursor as cursor for older entries.',
        security: BEARER_OR_API_KEY,
        params: VmIdParams,
        querystring: Type.Object({
          verdict: Type.Optional(StringEnum(['allowed', 'refused'] as const)),
          since: Type.Optional(Type.String({ format: 'date-time', description: 'Only attempts at or after this time' })),
          until: Type.Optional(Type.String({ format: 'date-time', description: 'Only attempts at or before this time' })),
          destination: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'Only attempts to this name or address' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          cursor: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: authedResponses({ 200: Type.Ref('EgressLogList') }, { 400: 'A cursor this server did not return', 404: 'No such VM among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { verdict, since, until, destination, limit, cursor } = request.query;
      const page = await services.sandbox.egress.listLog(principalOf(request), request.params.vm_id, {
        limit: limit ?? 100,
        ...(verdict ? { verdict } : {}),
        ...(since ? { since: new Date(since).toISOString() } : {}),
        ...(until ? { until: new Date(until).toISOString() } : {}),
        ...(destination ? { destination } : {}),
        ...(cursor ? { cursor } : {}),
      });
      return { items: page.items.map(toEgressLogEntryRecord), next_cursor: page.nextCursor };
    },
  );
}
