/**
 * Signed file URLs (E2B's `sandbox.downloadUrl()` / `uploadUrl()`): a `/files` request without the access token
 * is let in when its `signature` is the one only a holder of the sandbox's access token can make. The SDK signs
 * `<path>:<read|write>:<username>:<access token>[:<expiry>]` with SHA-256 (base64, `v1_` prefix, no padding); the
 * optional `signature_expiration` (Unix seconds) bounds it in time. The access token is derived, never stored
 * (core/auth/session-tokens.ts), so the check needs nothing kept.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../../../core/errors.ts';
import type { Services } from '../../../services.ts';
import { callerOf, type SandboxCaller } from '../sandbox-traffic/access.ts';
import type { SandboxTarget } from '../sandbox-traffic/rewrite.ts';

/** The signature of a file operation, as E2B's SDK makes it. */
export function fileSignatureOf(input: { path: string; operation: 'read' | 'write'; user: string; accessToken: string; expiresAt: number | null }): string {
  const raw = [input.path, input.operation, input.user, input.accessToken, ...(input.expiresAt === null ? [] : [String(input.expiresAt)])].join(':');
  return `v1_${createHash('sha256').update(raw).digest('base64').replace(/=+$/, '')}`;
}

function single(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/**
 * The caller of a signed `/files` request, or null when the request is not one (it carries an access token, or no
 * signature: the usual admission applies). A bad or expired signature is refused (401).
 */
export async function admitSignedFileRequest(services: Services, target: SandboxTarget, request: FastifyRequest): Promise<SandboxCaller | null> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const signature = single(query.signature);
  if (request.headers['x-access-token'] !== undefined || signature === undefined) return null;
  if (!request.url.split('?')[0]!.endsWith('/files')) return null;
  const operation = request.method === 'GET' ? 'read' : request.method === 'POST' ? 'write' : null;
  const expiryText = single(query.signature_expiration);
  const expiresAt = expiryText === undefined ? null : /^\d{1,12}$/.test(expiryText) ? Number(expiryText) : NaN;
  if (!operation || Number.isNaN(expiresAt)) throw new AppError('NOT_AUTHENTICATED', 'invalid file signature');
  if (expiresAt !== null && expiresAt * 1000 < Date.now()) throw new AppError('NOT_AUTHENTICATED', 'the file signature has expired');
  const expected = fileSignatureOf({
    path: single(query.path) ?? '',
    operation,
    user: single(query.username) ?? '',
    accessToken: services.sessionTokens.tokenFor('access', target.sandboxId),
    expiresAt,
  });
  const given = Buffer.from(signature);
  if (given.length !== expected.length || !timingSafeEqual(given, Buffer.from(expected))) throw new AppError('NOT_AUTHENTICATED', 'invalid file signature');
  return callerOf(services, target);
}
