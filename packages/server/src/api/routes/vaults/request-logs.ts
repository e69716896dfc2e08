/** GET /v1/vaults/{vault_id}/request-logs: every use of the vault's secrets, and placeholders flagged, newest first. */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, StringEnum } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVaultRequestLogRecord, VaultIdParams } from './schemas.ts';

export function registerVaultRequestLogs(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/vaults/:vault_id/request-logs',
    {
      schema: {
        tags: ['vaults'],
        summary: "A vault's request log",
        description:
          "One entry per secret per request: `substituted` when a VM's request to a bound host had the placeholder swapped for the value at its injection point, `flagged` when a placeholder went out unchanged: somewhere other than its injection point (the path, the query, another header: `detail` says where), to a host the secret is not bound to, over plain HTTP, or in a request refused because its Host was not the name the VM connected to (421). Kept for SANDBOXD_VAULT_LOG_RETENTION_DAYS. Newest first; pass next_cursor as cursor for older entries.",
        security: BEARER_OR_API_KEY,
        params: VaultIdParams,
        querystring: Type.Object({
          outcome: Type.Optional(StringEnum(['substituted', 'flagged'] as const)),
          vm_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          secret_name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
          since: Type.Optional(Type.String({ format: 'date-time' })),
          until: Type.Optional(Type.String({ format: 'date-time' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
          cursor: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: authedResponses({ 200: Type.Ref('VaultRequestLogList') }, { 400: 'A cursor this server did not return', 404: 'No such vault among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { outcome, vm_id: vmId, secret_name: secretName, since, until, limit, cursor } = request.query;
      const page = await services.vaults.listRequestLogs(
        principalOf(request),
        request.params.vault_id,
        {
          limit: limit ?? 100,
          ...(outcome ? { outcome } : {}),
          ...(vmId ? { vmId } : {}),
          ...(secretName ? { secretName } : {}),
          ...(since ? { since: new Date(since).toISOString() } : {}),
          ...(until ? { until: new Date(until).toISOString() } : {}),
          ...(cursor ? { cursor } : {}),
        },
        () => services.sandbox.vaultGateway.flushLog(),
      );
      return { items: page.items.map(toVaultRequestLogRecord), next_cursor: page.nextCursor };
    },
  );
}
