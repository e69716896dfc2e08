/**
 * Request authentication. Credentials are read, in order, from `X-API-Key`, `Authorization: Bearer`,
 * and (for the operations whose bodies have one) the `api_key` body or form field, as the original
 * service's clients send them. It runs in `preValidation`: after the body is parsed (so `api_key` can be
 * read) and before it is validated (so a caller without credentials gets 401, not a 422 that describes
 * the schema).
 */
import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { notAuthenticated, type Authenticator, type CredentialSource, type Principal } from '../core/authenticator.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on authenticated routes. */
    principal: Principal | null;
  }
}

function readCredential(request: FastifyRequest): { credential: string; source: CredentialSource } | null {
  const headerKey = request.headers['x-api-key'];
  if (typeof headerKey === 'string' && headerKey.trim() !== '') return { credential: headerKey.trim(), source: 'x-api-key' };
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match?.[1]) return { credential: match[1], source: 'bearer' };
  }
  const body = request.body as Record<string, unknown> | undefined | null;
  const bodyKey = body && typeof body === 'object' ? body.api_key : undefined;
  if (typeof bodyKey === 'string' && bodyKey.trim() !== '') return { credential: bodyKey.trim(), source: 'api_key field' };
  return null;
}

/** Adds `request.principal` and returns the hook that routes use to require authentication. */
export function createAuthHook(app: FastifyInstance, authenticator: Authenticator): preValidationAsyncHookHandler {
  app.decorateRequest('principal', null);
  return async (request) => {
    const found = readCredential(request);
    if (!found) throw notAuthenticated();
    request.principal = await authenticator.authenticate(found.credential, found.source);
  };
}

/** The principal of an authenticated request (routes behind the auth hook only). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw notAuthenticated();
  return request.principal;
}
