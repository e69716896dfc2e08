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
          'Sets the value and the hosts of a secret (created when the vault has none of that name). A new value reaches running VMs at their next request; a secret added now is seen by sessions that attach the vault from now on (sessions attached earlier keep the placeholders they got).',
        security: BEARER_OR_API_KEY,
        params: VaultSecretParams,
        body: VaultSecretSetBody,
        response: authedResponses({ 200: Type.Ref('VaultSecret') }, { 400: 'A bad value or host, or the vault is full', 404: 'No such vault among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { vault_id: vaultId, name } = request.params;
      const secret = await services.vaults.setSecret(principalOf(request), vaultId, { name, value: request.body.value, allowedHosts: request.body.allowed_hosts }, auditActorOf(request));
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
