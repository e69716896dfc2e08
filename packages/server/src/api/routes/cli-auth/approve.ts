/** POST /api/cli-auth/approve (authenticated): approve, or with `deny: true` deny, a command-line login. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import type { CliAuthApproveRequest } from './schemas.ts';

export function registerCliAuthApprove(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/api/cli-auth/approve',
    {
      schema: {
        tags: ['cli-auth'],
        summary: 'Approve a command-line login',
        description: 'The signed-in caller approves the login shown with `user_code` (its API key will belong to the caller), or denies it with `deny: true`.',
        security: BEARER_OR_API_KEY,
        body: Type.Ref('CLIAuthApproveRequest') as unknown as typeof CliAuthApproveRequest,
        response: authedResponses(
          { 200: Type.Ref('CLIAuthApproveResponse') },
          { 400: 'The login expired (CLI_AUTH_EXPIRED)', 404: 'No login with this user code', 409: 'The login was already approved, denied or used' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const actor = { ...auditActorOf(request), userId: principalOf(request).userId };
      const login = await services.cliAuth.decide(actor, request.body.user_code, request.body.deny ? 'deny' : 'approve');
      return { status: login.status, user_code: login.userCode, hostname: login.hostname, expires_at: login.expiresAt };
    },
  );
}
