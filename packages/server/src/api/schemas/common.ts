/** Schemas shared by many routes, registered once and referenced by `$id` (they become OpenAPI components). */
import { Type, type TSchema } from 'typebox';
import { MAX_RECORD_ID } from '../../contract/kit.ts';

// Shared with the wire contracts below core (`src/contract/`), where they are defined.
export { ListOffset, MAX_RECORD_ID, StringEnum } from '../../contract/kit.ts';

export const ErrorResponse = Type.Object(
  {
    detail: Type.String({ description: 'What went wrong and what to change' }),
    code: Type.String({ description: 'Stable error code, listed in docs/errors.md' }),
  },
  { $id: 'ErrorResponse', title: 'ErrorResponse', additionalProperties: true },
);

export const ValidationError = Type.Object(
  {
    loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
    msg: Type.String(),
    type: Type.String(),
  },
  { $id: 'ValidationError', title: 'ValidationError' },
);

export const HTTPValidationError = Type.Object(
  { detail: Type.Array(Type.Ref('ValidationError')) },
  { $id: 'HTTPValidationError', title: 'HTTPValidationError' },
);

/** A record id in a path or query: a canonical positive integer that fits the store's id columns. */
export const RecordId = (description?: string) => Type.Integer({ minimum: 1, maximum: MAX_RECORD_ID, ...(description ? { description } : {}) });

export const SHARED_SCHEMAS: TSchema[] = [ErrorResponse, ValidationError, HTTPValidationError];

/**
 * Body limit of the operations anyone may call (sign-in, command-line login): their bodies are a few
 * short fields, and nothing authenticates them before they are read.
 */
export const PUBLIC_BODY_LIMIT_BYTES = 64 * 1024;

/** Security requirement of operations marked "B" in the spec: OAuth2 bearer, or the X-API-Key header. */
export const BEARER_OR_API_KEY: { [scheme: string]: string[] }[] = [{ OAuth2PasswordBearer: [] }, { APIKeyHeader: [] }];

export const errorRef = (description: string) => ({ ...Type.Ref('ErrorResponse'), description });

/** Response schemas of an authenticated operation: the given successes plus the standard errors. */
export function authedResponses(success: Record<number, TSchema>, errors: Record<number, string> = {}): Record<number, unknown> {
  const result: Record<number, unknown> = { ...success };
  result[401] = errorRef('Missing or invalid credentials');
  for (const [status, description] of Object.entries(errors)) result[Number(status)] = errorRef(description);
  result[422] = { ...Type.Ref('HTTPValidationError'), description: 'Validation error' };
  return result;
}

/** Response schemas of an unauthenticated operation. */
export function publicResponses(success: Record<number, TSchema>, errors: Record<number, string> = {}): Record<number, unknown> {
  const result: Record<number, unknown> = { ...success };
  for (const [status, description] of Object.entries(errors)) result[Number(status)] = errorRef(description);
  result[422] = { ...Type.Ref('HTTPValidationError'), description: 'Validation error' };
  return result;
}

/**
 * A response whose body depends on its media type (an event stream, a download as JSON or bytes). Fastify
 * and @fastify/swagger take the OpenAPI `content` form as it is; TypeBox has no type for it.
 */
export function byMediaType(description: string, content: Record<string, TSchema>): TSchema {
  return { description, content: Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, { schema }])) } as unknown as TSchema;
}

/** An untyped JSON object response (the spec's "untyped JSON"). */
export const AnyObject = Type.Object({}, { additionalProperties: true });
