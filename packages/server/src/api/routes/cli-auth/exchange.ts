/**
 * POST /api/cli-auth/exchange (no authentication): trade an approved login's device code and PKCE verifier
 * for a new API key, once. Until approval it answers 400 CLI_AUTH_PENDING (400, as RFC 8628's
 * `authorization_pending`, so generic device-flow clients understand it; the body also has `error`).
 */
import { Type } from 'typebox';
import { clientInfoOf } from '../../audit-context.ts';
import { PUBLIC_BODY_LIMIT_BYTES, publicResponses } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import type { CliAuthExchangeRequest } from './schemas.ts';

export function registerCliAuthExchange(app: App, { services }: RouteContext): void {
  app.post(
    '/api/cli-auth/exchange',
    {
      bodyLimit: PUBLIC_BODY_LIMIT_BYTES,
      schema: {
        tags: ['cli-auth'],
        summary: 'Exchange an approved login for an API key',
        description:
          "Answers the new key once. Errors are 400 with `code` and RFC 8628's `error`: CLI_AUTH_PENDING (authorization_pending: poll again after `interval` s), " +
          'CLI_AUTH_SLOW_DOWN (slow_down: polled too fast; `interval` is the new interval), CLI_AUTH_DENIED (access_denied), CLI_AUTH_EXPIRED (expired_token), ' +
          'CLI_AUTH_ALREADY_USED, CLI_AUTH_INVALID_VERIFIER and CLI_AUTH_UNKNOWN_CODE (invalid_grant).',
        body: Type.Ref('CLIAuthExchangeRequest') as unknown as typeof CliAuthExchangeRequest,
        response: publicResponses({ 200: Type.Ref('CLIAuthExchangeResponse') }, { 400: 'Not (yet) exchangeable: see `code`' }),
      },
    },
    async (request) => {
      const { apiKey } = await services.cliAuth.exchange(
        { deviceCode: request.body.device_code, codeVerifier: request.body.code_verifier },
        clientInfoOf(request),
      );
      const user = await services.users.get(apiKey.userId);
      return {
        api_key: apiKey.fullKey,
        api_key_id: apiKey.id,
        key_prefix: apiKey.keyPrefix,
        user_id: apiKey.userId,
        username: user?.username ?? '',
        description: apiKey.description ?? '',
        created_at: apiKey.createdAt,
      };
    },
  );
}
