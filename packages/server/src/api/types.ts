/** Types shared by the route modules. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  preValidationAsyncHookHandler,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { Services } from '../services.ts';

/** The Fastify instance with TypeBox typing of schemas. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What every route module receives. */
export interface RouteContext {
  services: Services;
  /** preValidation hook that requires credentials and sets `request.principal`. */
  requireAuth: preValidationAsyncHookHandler;
}
