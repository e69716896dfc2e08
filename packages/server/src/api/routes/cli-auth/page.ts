/**
 * GET and POST /cli-auth: the page where a user signs in and approves (or denies) a command-line login.
 * Not part of the API document. The form posts the username and password to this same path; the server
 * signs in (audited and throttled like POST /v1/auth/token), then decides as that user.
 *
 * CSRF: every GET renders a fresh random token into the form and into a `SameSite=Strict`, `HttpOnly`
 * cookie scoped to this path; a POST must bring both, equal. Browsers that send `Origin` or
 * `Sec-Fetch-Site` must show the same origin. The form needs the password anyway, so a cross-site post
 * could not approve on its own; the token keeps it that way for sign-in methods that do not.
 * The page cannot be framed (clickjacking) and is never cached. No key ever appears in a URL.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import type { CliAuthDescription } from '../../../core/cli-auth.ts';
import { clientInfoOf } from '../../audit-context.ts';
import { isSameOriginOrNotBrowser, readCookie, sameSecret } from '../../browser-guards.ts';
import type { App, RouteContext } from '../../types.ts';
import { renderApprovalPage, type PageState } from './page-html.ts';
import { PUBLIC_BODY_LIMIT_BYTES } from '../../schemas/common.ts';

const CSRF_COOKIE = 'sandboxd_cli_csrf';
const PAGE_PATH = '/cli-auth';

const SECURITY_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/** Renders the page with a fresh CSRF token in the form and in the cookie. */
function sendPage(request: FastifyRequest, reply: FastifyReply, status: number, state: Omit<PageState, 'csrfToken'>): FastifyReply {
  const csrfToken = randomBytes(32).toString('base64url');
  const secure = request.protocol === 'https' ? '; Secure' : '';
  return reply
    .code(status)
    .headers(SECURITY_HEADERS)
    .header('set-cookie', `${CSRF_COOKIE}=${csrfToken}; Path=${PAGE_PATH}; HttpOnly; SameSite=Strict; Max-Age=1800${secure}`)
    .send(renderApprovalPage({ ...state, csrfToken }));
}

function finalState(login: CliAuthDescription): PageState['done'] | undefined {
  if (login.status === 'approved' || login.status === 'consumed') {
    return { title: 'Login approved', message: `The command line on ${login.hostname} is signed in (or will be in a few seconds). You can close this page.` };
  }
  if (login.status === 'denied') return { title: 'Login denied', message: `The login from ${login.hostname} was denied. No key was issued.` };
  if (login.expired) return { title: 'Login expired', message: 'This login has expired. Run `sandbox login` again for a new code.' };
  return undefined;
}

export function registerCliAuthPage(app: App, { services }: RouteContext): void {
  app.get(
    PAGE_PATH,
    { schema: { hide: true, querystring: Type.Object({ user_code: Type.Optional(Type.String({ maxLength: 40 })) }) } },
    async (request, reply) => {
      const userCode = request.query.user_code ?? '';
      if (!userCode) return sendPage(request, reply, 200, { userCode, login: null });
      try {
        const login = await services.cliAuth.describe(userCode);
        return sendPage(request, reply, 200, { userCode, login, done: finalState(login) });
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
        return sendPage(request, reply, 404, { userCode, login: null, error: `No login has the code "${userCode}". Check the code your terminal shows.` });
      }
    },
  );

  app.post(PAGE_PATH, { bodyLimit: PUBLIC_BODY_LIMIT_BYTES, schema: { hide: true } }, async (request, reply) => {
    const form = (request.body && typeof request.body === 'object' ? request.body : {}) as Record<string, unknown>;
    const field = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : '');
    const userCode = field('user_code').slice(0, 40);
    const username = field('username').slice(0, 200);

    const cookie = readCookie(request, CSRF_COOKIE);
    if (!cookie || !field('csrf_token') || !sameSecret(cookie, field('csrf_token')) || !isSameOriginOrNotBrowser(request)) {
      return sendPage(request, reply, 403, {
        userCode,
        login: null,
        username,
        error: 'This form expired or did not come from this page. It has been reloaded: please try again.',
      });
    }

    let login: CliAuthDescription;
    try {
      login = await services.cliAuth.describe(userCode);
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'NOT_FOUND')) throw error;
      return sendPage(request, reply, 404, {
        userCode,
        login: null,
        username,
        error: `No login has the code "${userCode}". Check the code your terminal shows.`,
      });
    }
    const done = finalState(login);
    if (done) return sendPage(request, reply, 409, { userCode, login, done });

    let principal;
    try {
      principal = await services.signIn.checkPassword(username, field('password'), clientInfoOf(request));
    } catch (error) {
      if (error instanceof AppError && error.code === 'RATE_LIMITED') {
        const page = {
          userCode,
          login,
          username,
          error: `Too many failed sign-ins for this username or from this address: try again in ${String(error.fields.retry_after)} seconds.`,
        };
        return sendPage(request, reply.headers(error.headers), 429, page);
      }
      if (!(error instanceof AppError && error.statusCode === 401)) throw error;
      return sendPage(request, reply, 401, { userCode, login, username, error: 'Incorrect username or password.' });
    }

    const decision = field('decision') === 'deny' ? 'deny' : 'approve';
    try {
      const decided = await services.cliAuth.decide(
        { userId: principal.id, username: principal.username, via: 'password', apiKeyId: null, ...clientInfoOf(request) },
        userCode,
        decision,
      );
      return sendPage(request, reply, 200, { userCode, login: decided, done: finalState(decided) });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      return sendPage(request, reply, error.statusCode, { userCode, login, username, error: error.message });
    }
  });
}
