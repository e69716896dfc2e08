/** GET /v1/ssh/info: where the SSH gateway listens, so a client (`sandbox ssh`) can build the ssh command. */
import { Type } from 'typebox';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

/** The gateway's address is read per request: it binds once the app is ready, and not at all when it is off. */
export function registerSshInfo(app: App, { requireAuth, sshGateway }: RouteContext): void {
  app.get(
    '/v1/ssh/info',
    {
      schema: {
        tags: ['ssh-keys'],
        summary: "The SSH gateway's address",
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: Type.Ref('SshGatewayInfo') }),
      },
      onRequest: requireAuth,
    },
    async () => {
      const address = sshGateway();
      if (!address)
        return {
          enabled: false,
          host: null,
          port: null,
          host_key_fingerprint: null,
          usage: 'this server runs without its SSH gateway (SANDBOXD_SSH_LISTEN=off)',
        };
      return {
        enabled: true,
        host: address.publicHost,
        port: address.port,
        host_key_fingerprint: address.hostKeyFingerprint,
        usage: `ssh -p ${address.port} <vm_id or session_id>@${address.publicHost} (log in with a key registered at POST /v1/ssh-keys)`,
      };
    },
  );
}
