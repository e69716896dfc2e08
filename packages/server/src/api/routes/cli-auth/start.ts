/** POST /api/cli-auth/start (no authentication): start a command-line login bound to a PKCE challenge. */
import { Type } from 'typebox';
import { clientInfoOf } from '../../audit-context.ts';
import { PUBLIC_BODY_LIMIT_BYTES, publicResponses } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import type { CliAuthStartRequest } from './schemas.ts';
import { CLI_LOGIN_PATH } from '../../dashboard/serve.ts';
import { approvalPageBase } from './verification-url.ts';

export function registerCliAuthStart(app: App, { services }: RouteContext): void {
  app.post(
    '/api/cli-auth/start',
    {
      bodyLimit: PUBLIC_BODY_LIMIT_BYTES,
      schema: {
        tags: ['cli-auth'],
        summary: 'Start a command-line login',
        description:
          'Device authorization (RFC 8628) bound with PKCE (S256). Show `user_code` and open `verification_uri_complete`; the user signs in there and approves. ' +
          'Then poll `POST /api/cli-auth/exchange` every `interval` seconds with `device_code` and the `code_verifier`.',
        body: Type.Ref('CLIAuthStartRequest') as unknown as typeof CliAuthStartRequest,
        response: publicResponses({ 200: Type.Ref('CLIAuthStartResponse') }, { 400: 'Malformed code_challenge' }),
      },
    },
    async (request) => {
      const started = await services.cliAuth.start({ hostname: request.body.hostname, codeChallenge: request.body.code_challenge }, clientInfoOf(request));
      // The web console's approval page (it falls back to the server-rendered /cli-auth when the console is not built).
      const page = `${approvalPageBase(request, services.config.server.publicUrl)}${CLI_LOGIN_PATH}`;
      return {
        device_code: started.deviceCode,
        user_code: started.userCode,
        verification_uri: page,
        verification_uri_complete: `${page}?user_code=${encodeURIComponent(started.userCode)}`,
        expires_in: started.expiresInSeconds,
        interval: started.intervalSeconds,
      };
    },
  );
}
