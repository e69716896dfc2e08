/**
 * The one place errors become HTTP responses. Domain errors carry their code; Fastify's own errors
 * (bad JSON, wrong content type, oversized body) get codes too; validation errors get FastAPI's 422
 * shape; anything else is a 500 whose details stay in the log, never in the response.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_CODES, InputError, type ErrorCode } from '../core/errors.ts';
import { toValidationDetails, type ValidationDetail } from './validation-errors.ts';

/** Fastify error codes that are the client's fault, with the code we answer. */
const FASTIFY_CLIENT_ERRORS: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_REQ_FILE_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_FILES_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_PARTS_LIMIT: 'PAYLOAD_TOO_LARGE',
  FST_INVALID_MULTIPART_CONTENT_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
};

export function sendError(
  reply: FastifyReply,
  code: ErrorCode,
  detail: string,
  headers: Record<string, string> = {},
  fields: Record<string, unknown> = {},
): FastifyReply {
  return reply
    .code(ERROR_CODES[code])
    .headers(headers)
    .send({ ...fields, detail, code });
}

function sendValidation(reply: FastifyReply, detail: ValidationDetail[]): FastifyReply {
  return reply.code(422).send({ detail });
}

/**
 * Adds to the 404 of an unknown route what the request's host is, when that says more (a custom domain that
 * is not verified yet); null to say nothing.
 */
export type NotFoundHint = (request: FastifyRequest) => Promise<string | null>;

export function registerErrorHandling(app: FastifyInstance, notFoundHint: NotFoundHint = async () => null): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError) return sendError(reply, error.code, error.message, error.headers, error.fields);
    if (error instanceof InputError) return sendValidation(reply, error.problems);

    if (error.validation) {
      const context = error.validationContext;
      const input = context === 'body' ? request.body : undefined;
      return sendValidation(reply, toValidationDetails(error.validation, context, input));
    }

    // Body parsing: FastAPI answers these as 422 at loc ["body", …] too.
    if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return sendValidation(reply, [{ loc: ['body'], msg: 'Field required', type: 'missing' }]);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || (error instanceof SyntaxError && error.statusCode === 400)) {
      const position = /position (\d+)/.exec(error.message)?.[1];
      return sendValidation(reply, [{ loc: ['body', position ? Number(position) : 0], msg: 'JSON decode error', type: 'json_invalid' }]);
    }

    const mapped = error.code ? FASTIFY_CLIENT_ERRORS[error.code] : undefined;
    if (mapped) return sendError(reply, mapped, error.message);
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(reply, error.statusCode === 404 ? 'NOT_FOUND' : 'BAD_REQUEST', error.message);
    }

    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 'INTERNAL_ERROR', `Internal server error (request id ${request.id}); the details are in the server log`);
  });

  app.setNotFoundHandler(async (request, reply) => {
    const hint = await notFoundHint(request).catch((error: unknown) => {
      request.log.warn({ err: error }, 'the hint of a 404 could not be made');
      return null;
    });
    return sendError(reply, 'NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}${hint ? ` (${hint})` : ''}`);
  });
}
