/**
 * The code interpreter's API (port 49999, `@e2b/code-interpreter`): `POST /execute` (execute.ts) and the contexts
 * (contexts.ts), reached through the rewriter at `${INTERNAL_PREFIX}/code/…`. Every request is admitted first as a
 * request to one of the sandbox's ports (public traffic, or its traffic or access token: access.ts); running code
 * also takes the access token. Errors are plain text with E2B's statuses, as its server answers them: the SDK
 * raises NotFoundError for 404 and SandboxError for the others.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, InputError } from '../../../core/errors.ts';
import type { Services } from '../../../services.ts';
import { jsonShapeProblem } from '../../json-body.ts';
import type { App } from '../../types.ts';
import { e2bErrorOf } from '../errors.ts';
import { admitToPort } from '../sandbox-traffic/access.ts';
import { INTERNAL_PREFIX, targetOf } from '../sandbox-traffic/rewrite.ts';
import { registerContexts } from './contexts.ts';
import { registerExecute } from './execute.ts';

function sendPlainError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const known = e2bErrorOf(error);
  if (!known) request.log.error({ err: error }, 'unhandled error in the E2B code interpreter API');
  if (error instanceof AppError) reply.headers(error.headers);
  return reply
    .code(known?.status ?? 500)
    .type('text/plain; charset=utf-8')
    .send(known?.message ?? `internal error (request id ${request.id}); the details are in the server log`);
}

export function registerCodeInterpreter(app: App, services: Services): void {
  app.register(
    async (scope) => {
      // The SDK sends `Content-Type: application/json` with no body on restart and remove: an empty body is none.
      const parse = scope.getDefaultJsonParser('error', 'error');
      scope.removeContentTypeParser('application/json');
      scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
        const text = body as string;
        if (text.trim() === '') return done(null, undefined);
        const problem = jsonShapeProblem(text);
        if (problem) return done(new InputError([problem]), undefined);
        parse(request, text, done);
      });
      scope.addHook('onRequest', async (request) => {
        const target = targetOf(request.raw);
        // Reached by path, not through the rewriter: no sandbox's route.
        if (!target || target.kind !== 'code') throw new AppError('NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`);
        request.e2bCaller = await admitToPort(services, target, request.headers);
      });
      scope.setErrorHandler((error, request, reply) => sendPlainError(error, request, reply));
      scope.setNotFoundHandler((request, reply) =>
        sendPlainError(new AppError('NOT_FOUND', `no route ${request.method} ${request.url.split('?')[0]}`), request, reply),
      );
      const scoped = scope as unknown as App;
      registerExecute(scoped, services);
      registerContexts(scoped, services);
    },
    { prefix: `${INTERNAL_PREFIX}/code` },
  );
}
