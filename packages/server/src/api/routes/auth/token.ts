/** POST /v1/auth/token: the OAuth2 password flow (form `username` + `password` → signed bearer token). */
import { Type } from 'typebox';
import { clientInfoOf } from '../../audit-context.ts';
import { PUBLIC_BODY_LIMIT_BYTES, publicResponses } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

const TokenRequest = Type.Object({
  grant_type: Type.Optional(Type.String({ pattern: '^password$', description: 'Only "password" is supported' })),
  username: Type.String({ minLength: 1, maxLength: 200 }),
  password: Type.String({ minLength: 1, maxLength: 1000 }),
  scope: Type.Optional(Type.String()),
  client_id: Type.Optional(Type.String()),
  client_secret: Type.Optional(Type.String()),
});

const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('bearer'),
  expires_in: Type.Integer({ description: 'Seconds until the token expires' }),
});

export function registerTokenRoute(app: App, { services }: RouteContext): void {
  app.post(
    '/v1/auth/token',
    {
      bodyLimit: PUBLIC_BODY_LIMIT_BYTES,
      schema: {
        tags: ['auth'],
        summary: 'Sign in with a username and password (OAuth2 password flow)',
        description:
          'Form-encoded (application/x-www-form-urlencoded) as OAuth2 prescribes; JSON is accepted too. The token is a short-lived signed bearer token (SANDBOXD_ACCESS_TOKEN_TTL_SECONDS). ' +
          'Failed sign-ins are counted per username and per source address (shared with POST /v1/auth/session): past the limit this answers 429 RATE_LIMITED with Retry-After, even with the right password.',
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenRequest,
        response: publicResponses(
          { 200: TokenResponse },
          { 401: 'Wrong username or password', 429: 'Too many failed sign-ins for this username or from this address (Retry-After)' },
        ),
      },
    },
    async (request) => {
      const { token, expiresInSeconds } = await services.signIn.signIn(request.body.username, request.body.password, clientInfoOf(request));
      return { access_token: token, token_type: 'bearer' as const, expires_in: expiresInSeconds };
    },
  );
}
