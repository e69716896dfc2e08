/**
 * The web console's sign-in: POST /v1/auth/session takes a username and password (the password flow, audited
 * like POST /v1/auth/token) or an API key, both throttled (core/auth/sign-in-throttle.ts), starts a server-side
 * console session (core/auth/console-sessions.ts) and answers with its cookies (api/dashboard/session-cookies.ts):
 * an HttpOnly cookie holding the session's random token (never the key) and the session's CSRF token, which the
 * console echoes. GET tells the console who is signed in; DELETE signs out: the session ends on the server at
 * once (its cookie value is refused from then on) and the cookies expire.
 */
import { Type } from 'typebox';
import { forbidden, InputError } from '../../../core/errors.ts';
import { clientInfoOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { isSameOriginOrNotBrowser } from '../../browser-guards.ts';
import { clearSessionCookies, sessionCookieValues, setSessionCookies } from '../../dashboard/session-cookies.ts';
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
  csrf_token: Type.Optional(
    Type.String({
      description:
        'Send it in X-CSRF-Token with every request but GET and HEAD (also in the sandboxd_csrf cookie, __Host-sandboxd_csrf over HTTPS); it is bound to this session',
    }),
  ),
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
          'For browsers: starts a console session held by the server and sets an HttpOnly, SameSite=Strict session cookie (a random token naming it, not the key) and a CSRF cookie, ' +
          "both `__Host-` prefixed over HTTPS. Requests authenticated by the cookie must send the session's CSRF token in X-CSRF-Token, except GET and HEAD. " +
          'Failed sign-ins are counted per username and per source address: past SANDBOXD_SIGN_IN_MAX_FAILURES_PER_USERNAME / _PER_ADDRESS in SANDBOXD_SIGN_IN_WINDOW_SECONDS, ' +
          'sign-ins are refused with 429 RATE_LIMITED and Retry-After, even with the right password.',
        body: SessionSignIn,
        response: publicResponses(
          { 200: ConsoleSession },
          {
            401: 'Wrong username or password, or an invalid API key',
            403: 'Sent by a page of another origin',
            429: 'Too many failed sign-ins for this username or from this address (Retry-After)',
          },
        ),
      },
    },
    async (request, reply) => {
      if (!isSameOriginOrNotBrowser(request)) throw forbidden('Sign-in to the console is accepted from its own pages only');
      const body = request.body;
      let user: { userId: number; username: string; isAdmin: boolean; apiKeyId: number | null };
      if (body.api_key !== undefined && body.username === undefined && body.password === undefined) {
        const principal = await services.signIn.checkApiKey(body.api_key.trim(), clientInfoOf(request));
        user = { userId: principal.userId, username: principal.username, isAdmin: principal.isAdmin, apiKeyId: principal.apiKeyId };
      } else {
        if (body.username === undefined || body.password === undefined || body.api_key !== undefined) {
          throw new InputError([{ loc: ['body'], msg: 'Give username and password, or api_key', type: 'value_error' }]);
        }
        const found = await services.signIn.checkPassword(body.username, body.password, clientInfoOf(request));
        user = { userId: found.id, username: found.username, isAdmin: found.isAdmin, apiKeyId: null };
      }
      // A new sign-in replaces the session this browser had.
      for (const previous of sessionCookieValues(request)) await services.consoleSessions.revoke(previous);
      const session = await services.consoleSessions.start(user.userId, user.apiKeyId);
      setSessionCookies(request, reply, session.token, session.csrfToken, session.expiresInSeconds);
      return { user_id: user.userId, username: user.username, is_admin: user.isAdmin, csrf_token: session.csrfToken, expires_in: session.expiresInSeconds };
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
        description:
          'Ends the console session the cookie names, on the server (its cookie value is refused from then on), and expires the session and CSRF cookies. ' +
          'Needs no credential, so a stale cookie can always be cleared.',
        response: publicResponses({ 204: Type.Null() }),
      },
    },
    async (request, reply) => {
      // Another origin's page may not end a visitor's session (it could not send the cookie anyway: SameSite=Strict).
      if (isSameOriginOrNotBrowser(request)) {
        for (const token of sessionCookieValues(request)) await services.consoleSessions.revoke(token);
      }
      clearSessionCookies(request, reply);
      return reply.code(204).send();
    },
  );
}
