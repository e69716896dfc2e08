/** /v1/vaults: create, list, read, rename and delete your vaults (a vault's secrets are shown without values). */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toVaultRecord, VaultCreateBody, VaultIdParams, VaultUpdateBody } from './schemas.ts';

const TAGS = ['vaults'];

export function registerVaultCrud(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/vaults',
    {
      schema: {
        tags: TAGS,
        summary: 'Create a vault',
        description:
          "A vault holds secrets that VMs use without ever holding them. Each secret is bound to `allowed_hosts` and names its injection point `inject` (default `Authorization: Bearer`; or Basic credentials, or one named header with a prefix). Start a session or VM with `vault_ids: [<id>]`: it sees each secret as an environment variable of the same name holding a placeholder (`sbxv_…`), and sandboxd swaps the placeholder for the value at that injection point only, in HTTPS requests to the bound hosts whose Host is the name the VM connected to (TLS terminated with the deployment CA the VM trusts; a request whose Host or absolute-form target names another host is answered 421 and not forwarded). A placeholder anywhere else (path, query, other headers, another host) goes out unchanged and is flagged. Every value of the session's secrets, also URL-encoded, JSON-escaped, hex or base64, is masked with `*` in what the host answers. Every use is in `GET /v1/vaults/{vault_id}/request-logs`. Values are encrypted at rest under the vault key (SANDBOXD_VAULT_KEY, or a generated DATA_DIR/vault.key; never the database) and never returned.",
        security: BEARER_OR_API_KEY,
        body: VaultCreateBody,
        response: authedResponses(
          { 201: Type.Ref('Vault') },
          {
            400: 'A bad secret name, value, host or injection point',
            409: 'You have a vault of that name',
            429: 'You have the most vaults an account may have',
            503: 'Secrets given and this node has no usable vault key (VAULT_KEY_UNAVAILABLE)',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const { name, description, secrets } = request.body;
      const vault = await services.vaults.create(
        principalOf(request),
        {
          name,
          description,
          secrets: secrets?.map((secret) => ({ name: secret.name, value: secret.value, allowedHosts: secret.allowed_hosts, inject: secret.inject })),
        },
        auditActorOf(request),
      );
      return reply.code(201).send(toVaultRecord(vault));
    },
  );

  app.get(
    '/v1/vaults',
    {
      schema: { tags: TAGS, summary: 'List your vaults', security: BEARER_OR_API_KEY, response: authedResponses({ 200: Type.Array(Type.Ref('Vault')) }) },
      onRequest: requireAuth,
    },
    async (request) => (await services.vaults.list(principalOf(request))).map(toVaultRecord),
  );

  app.get(
    '/v1/vaults/:vault_id',
    {
      schema: {
        tags: TAGS,
        summary: 'A vault, with its secrets (names and hosts)',
        security: BEARER_OR_API_KEY,
        params: VaultIdParams,
        response: authedResponses({ 200: Type.Ref('Vault') }, { 404: 'No such vault among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toVaultRecord(await services.vaults.get(principalOf(request), request.params.vault_id)),
  );

  app.patch(
    '/v1/vaults/:vault_id',
    {
      schema: {
        tags: TAGS,
        summary: 'Rename a vault or change its description',
        security: BEARER_OR_API_KEY,
        params: VaultIdParams,
        body: VaultUpdateBody,
        response: authedResponses({ 200: Type.Ref('Vault') }, { 404: 'No such vault among yours', 409: 'You have a vault of that name' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toVaultRecord(await services.vaults.update(principalOf(request), request.params.vault_id, request.body, auditActorOf(request))),
  );

  app.delete(
    '/v1/vaults/:vault_id',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a vault and its secrets',
        description:
          'Placeholders that running VMs hold stop being swapped at once: they go out unchanged (and are flagged). The request log stays until its retention ends.',
        security: BEARER_OR_API_KEY,
        params: VaultIdParams,
        response: authedResponses({ 204: Type.Null({ description: 'Deleted' }) }, { 404: 'No such vault among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await services.vaults.delete(principalOf(request), request.params.vault_id, auditActorOf(request));
      return reply.code(204).send();
    },
  );
}
