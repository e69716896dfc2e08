/**
 * Every operation of the interface spec that a later issue implements. Each is registered with its
 * path, parameters and authentication, so the OpenAPI document lists the whole surface from the start,
 * and answers 501 NOT_IMPLEMENTED until its real route replaces the entry here.
 */
import { Type, type TSchema } from 'typebox';
import { AppError } from '../../core/errors.ts';
import { AnyObject, authedResponses, BEARER_OR_API_KEY, publicResponses } from '../schemas/common.ts';
import type { App, RouteContext } from '../types.ts';

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD' | 'OPTIONS';

interface PendingOperation {
  method: Method | Method[];
  url: string;
  tag: string;
  summary: string;
  /** false for the operations the spec declares without security. */
  auth?: boolean;
  params?: TSchema;
  querystring?: TSchema;
  /** A JSON body (any object) is expected. */
  body?: boolean;
  /** The body may carry the API key in an `api_key` field, as the spec's clients send it. */
  bodyKey?: boolean;
  deprecated?: boolean;
}

const str = () => Type.String();

const PENDING: PendingOperation[] = [
  // Executions
  // Sessions
  // VMs
  // Execution, kill and files
  // Command-line login
];

function notImplemented(): never {
  throw new AppError('NOT_IMPLEMENTED', 'not implemented yet');
}

export function registerNotImplementedRoutes(app: App, { requireAuth, requireAuthOrBodyKey }: RouteContext): void {
  app.register(async (scope) => {
    for (const op of PENDING) {
      const authed = op.auth !== false;
      scope.route({
        method: op.method,
        url: op.url,
        // Explicit HEAD operations are part of the spec; Fastify's automatic ones stay out of the document.
        ...(op.method === 'HEAD' ? { config: { swagger: { exposeHeadRoute: true } } } : {}),
        schema: {
          tags: [op.tag],
          summary: op.summary,
          description: 'Not implemented yet: answers 501 NOT_IMPLEMENTED.',
          ...(op.deprecated ? { deprecated: true } : {}),
          ...(authed ? { security: BEARER_OR_API_KEY } : {}),
          ...(op.params ? { params: op.params } : {}),
          ...(op.querystring ? { querystring: op.querystring } : {}),
          response: (authed ? authedResponses : publicResponses)({ 200: AnyObject }, { 501: 'Not implemented yet' }),
        },
        ...(authed ? (op.bodyKey ? requireAuthOrBodyKey : { onRequest: requireAuth }) : {}),
        handler: notImplemented,
      });
    }
  });
}
