/** PUT and DELETE /v1/vaults/{vault_id}/secrets/{name}: add, rotate or remove one secret of a vault. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVaultSecretRecord, VaultSecretParams, VaultSecretSetBody } from './schemas.ts';

export function registerVaultSecrets(app: App, { services, requireAuth }: RouteContext): void {
  app.put(
    '/v1/vaults/:vault_id/secrets/:name',
    {
      schema: {
        tags: ['vaults'],
        summary: 'Add or replace a secret',
        description:
          'Sets the value, the hosts and the injection point (`inject`, where in a request the value may go) of a secret (created when the vault has none of that name; without `inject` an existing secret keeps its own, a new one gets `Authorization: Bearer`). A new value reaches running VMs at their next request; a secret added now is seen by sessions that attach the vault from now on (sessions attached earlier keep the placeholders they got). 503 VAULT_KEY_UNAVAILABLE when this node has no vault key.',
        security: BEARER_OR_API_KEY,
        params: VaultSecretParams,
        body: VaultSecretSetBody,
        response: authedResponses(
          { 200: Type.Ref('VaultSecret') },
          {
            400: 'A bad value, host or injection point, or the vault is full',
            404: 'No such vault among yours',
            503: 'This node has no usable vault key (VAULT_KEY_UNAVAILABLE)',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { vault_id: vaultId, name } = request.params;
      const { value, allowed_hosts: allowedHosts, inject } = request.body;
      const secret = await services.vaults.setSecret(principalOf(request), vaultId, { name, value, allowedHosts, inject }, auditActorOf(request));
      return toVaultSecretRecord(secret);
    },
  );

  app.delete(
    '/v1/vaults/:vault_id/secrets/:name',
    {
      schema: {
        tags: ['vaults'],
        summary: 'Delete a secret',
        description: 'Its placeholder stops being swapped at once.',
        security: BEARER_OR_API_KEY,
        params: VaultSecretParams,
        response: authedResponses({ 204: Type.Null({ description: 'Deleted' }) }, { 404: 'No such vault among yours, or no such secret in it' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await services.vaults.deleteSecret(principalOf(request), request.params.vault_id, request.params.name, auditActorOf(request));
      return reply.code(204).send();
    },
  );
}
