/** Who is acting and from where, taken from a request, for the core's audit log entries. */
import type { FastifyRequest } from 'fastify';
import { principalOf } from './authentication.ts';
import type { AuditActor } from '../core/audit.ts';
import type { ClientInfo } from '../core/sign-in.ts';

/** The source address (behind a trusted proxy, from X-Forwarded-For) and the user agent. */
export function clientInfoOf(request: FastifyRequest): ClientInfo {
  const userAgent = request.headers['user-agent'];
  return { sourceIp: request.ip ?? null, userAgent: typeof userAgent === 'string' ? userAgent : null };
}

/** The authenticated caller as an audit actor (routes behind the auth hook only). */
export function auditActorOf(request: FastifyRequest): AuditActor {
  const principal = principalOf(request);
  return { userId: principal.userId, username: principal.username, via: principal.via, apiKeyId: principal.apiKeyId, ...clientInfoOf(request) };
}
