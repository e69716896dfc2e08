/**
 * The web console's sign-in: POST /v1/auth/session takes a username and password (the password flow, audited
 * like POST /v1/auth/token) or an API key, and answers with the session cookies (api/dashboard/session-cookies.ts):
 * an HttpOnly cookie holding a bearer token for the user (never the key itself) and the CSRF token the console
 * echoes. GET tells the console who is signed in; DELETE signs out (expires the cookies).
 */
import { Type } from 'typebox';
import { forbidden, InputError } from '../../../core/errors.ts';
import { clientInfoOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { isSameOriginOrNotBrowser } from '../../browser-guards.ts';
import { clearSessionCookies, setSessionCookies } from '../../dashboard/session-cookies.ts';
import { authedResponses, BEARER_OR_API_KEY, PUBLIC_BODY_LIMIT_BYTES, publicResponses } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

// One object rather than a union: Ajv's removeAdditional would strip one branch's fields while trying the other.
const SessionSignIn = Type.Object(
  {
    username: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    password: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
    api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Instead of username and password' })),
  },
  { description: 'A username and password, or an API key' },
);

const ConsoleSession = Type.Object({
  user_id: Type.Integer(),
  username: Type.String(),
  is_admin: Type.Boolean(),
  csrf_token: Type.Optional(Type.String({ description: 'Send it in X-CSRF-Token with every request but GET and HEAD (also in the sandboxd_csrf cookie)' })),
  expires_in: Type.Optional(Type.Integer({ description: 'Seconds until the session ends' })),
});

export function registerSessionSignInRoutes(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/auth/session',
    {
      bodyLimit: PUBLIC_BODY_LIMIT_BYTES,
      schema: {
        tags: ['auth'],
        summary: 'Sign in to the web console (session cookie)',
        description:
          'For browsers: sets an HttpOnly, SameSite=Strict session cookie (a bearer token, not the key) and a CSRF cookie. ' +
          'Requests authenticated by the cookie must send the CSRF token in X-CSRF-Token, except GET and HEAD.',
        body: SessionSignIn,
        response: publicResponses({ 200: ConsoleSession }, { 401: 'Wrong username or password, or an invalid API key', 403: 'Sent by a page of another origin' }),
      },
    },
    async (request, reply) => {
      if (!isSameOriginOrNotBrowser(request)) throw forbidden('Sign-in to the console is accepted from its own pages only');
      const body = request.body;
      let userId: number;
      if (body.api_key !== undefined && body.username === undefined && body.password === undefined) {
        userId = (await services.authenticator.authenticate(body.api_key.trim(), 'x-api-key')).userId;
      } else {
        if (body.username === undefined || body.password === undefined || body.api_key !== undefined) {
          throw new InputError([{ loc: ['body'], msg: 'Give username and password, or api_key', type: 'value_error' }]);
        }
        const { token } = await services.signIn.signIn(body.username, body.password, clientInfoOf(request));
        userId = (await services.authenticator.authenticate(token, 'bearer')).userId;
      }
      const { token, expiresInSeconds } = await services.tokens.issue(userId);
      const principal = await services.authenticator.authenticate(token, 'bearer');
      const csrf = setSessionCookies(request, reply, token, expiresInSeconds);
      return { user_id: principal.userId, username: principal.username, is_admin: principal.isAdmin, csrf_token: csrf, expires_in: expiresInSeconds };
    },
  );

  app.get(
    '/v1/auth/session',
    {
      schema: {
        tags: ['auth'],
        summary: 'Who is signed in',
        description: 'The caller of any credential; the web console asks at start whether its cookie still works.',
        security: BEARER_OR_API_KEY,
        response: authedResponses({ 200: ConsoleSession }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const principal = principalOf(request);
      return { user_id: principal.userId, username: principal.username, is_admin: principal.isAdmin };
    },
  );

  app.delete(
    '/v1/auth/session',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign out of the web console',
        description: 'Expires the session and CSRF cookies. Needs no credential, so a stale cookie can always be cleared.',
        response: publicResponses({ 204: Type.Null() }),
      },
    },
    async (request, reply) => {
      clearSessionCookies(request, reply);
      return reply.code(204).send();
    },
  );
}
