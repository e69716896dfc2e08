/**
 * Errors in E2B's shapes, so its SDK raises its own classes for the same causes. The control plane answers
 * `{"code": <status>, "message": "…"}` with sandboxd's status (the SDK keys on 401, 404, 429 and 503); the in-sandbox
 * API answers Connect errors whose codes the SDK maps (NotFound, InvalidArgument, Unauthenticated,
 * ResourceExhausted, Unavailable, DeadlineExceeded). The cause's words are sandboxd's own.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CODES, InputError } from '../../core/errors.ts';

/** An error as the E2B control plane words it: the HTTP status and its message. */
export function e2bErrorOf(error: unknown): { status: number; message: string } | null {
  if (error instanceof AppError) return { status: ERROR_CODES[error.code], message: error.message };
  if (error instanceof InputError) return { status: 400, message: error.problems.map((problem) => `${problem.loc.join('.')}: ${problem.msg}`).join('; ') };
  const fastify = error as FastifyError;
  if (fastify.validation) return { status: 400, message: `${fastify.validationContext ?? 'request'} ${fastify.message}` };
  if (fastify.statusCode && fastify.statusCode >= 400 && fastify.statusCode < 500) return { status: fastify.statusCode, message: fastify.message };
  return null;
}

/** The control plane's error handler: E2B's `Error` body, and a 500 whose details stay in the log. */
export function sendE2bError(error: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const known = e2bErrorOf(error);
  if (known) {
    if (error instanceof AppError) reply.headers(error.headers);
    return reply.code(known.status).send({ code: known.status, message: known.message });
  }
  request.log.error({ err: error }, 'unhandled error in the E2B API');
  return reply.code(500).send({ code: 500, message: `Internal server error (request id ${request.id}); the details are in the server log` });
}

/** Connect's code for an HTTP status of sandboxd's. */
function connectCodeOf(status: number): Code {
  if (status === 400 || status === 409 || status === 413 || status === 415 || status === 422) return Code.InvalidArgument;
  if (status === 401) return Code.Unauthenticated;
  if (status === 403) return Code.PermissionDenied;
  if (status === 404 || status === 410) return Code.NotFound;
  if (status === 408) return Code.DeadlineExceeded;
  if (status === 429) return Code.ResourceExhausted;
  if (status === 503) return Code.Unavailable;
  if (status === 507) return Code.ResourceExhausted;
  return Code.Internal;
}

/** Any error as a Connect error for the in-sandbox API (a ConnectError passes unchanged). */
export function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError) return error;
  const known = e2bErrorOf(error);
  if (known) return new ConnectError(known.message, connectCodeOf(known.status));
  return new ConnectError('internal error; the details are in the server log', Code.Internal, undefined, undefined, error);
}
