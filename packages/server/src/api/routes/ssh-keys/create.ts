/** POST /v1/ssh-keys: register a public key; it logs in to the caller's VMs through the SSH gateway. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { SshKeyCreateBody, toSshKeyRecord } from './schemas.ts';

export function registerCreateSshKey(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/ssh-keys',
    {
      schema: {
        tags: ['ssh-keys'],
        summary: 'Register an SSH public key',
        description: 'The key then logs in to your VMs and sessions: `ssh <vm_id or session_id>@<host> -p <port>` (see GET /v1/ssh/info).',
        security: BEARER_OR_API_KEY,
        body: SshKeyCreateBody,
        response: authedResponses(
          { 201: Type.Ref('SshKeyRecord') },
          { 400: 'Name too long', 409: 'You have registered this key already', 429: 'You have the most SSH keys an account may have' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const key = await services.sshKeys.create(
        principalOf(request).userId,
        { publicKey: request.body.public_key, name: request.body.name },
        auditActorOf(request),
      );
      return reply.code(201).send(toSshKeyRecord(key));
    },
  );
}
