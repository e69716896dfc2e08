/** The onRequest hook of administrator-only operations: authenticated, then 403 unless an administrator. */
import type { onRequestAsyncHookHandler } from 'fastify';
import { forbidden } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';

export function adminOnly(requireAuth: onRequestAsyncHookHandler): onRequestAsyncHookHandler {
  return async function (request, reply) {
    await requireAuth.call(this, request, reply);
    if (!principalOf(request).isAdmin) throw forbidden('Only administrators may use this operation');
  };
}
