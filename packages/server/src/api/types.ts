/** Types shared by the route modules. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawReplyDefaultExpression, RawRequestDefaultExpression, RawServerDefault } from 'fastify';
import type { Services } from '../services.ts';
import type { SshGatewayAddress } from '../ssh/ssh-gateway.ts';
import type { AuthHooks } from './authentication.ts';

/** The Fastify instance with TypeBox typing of schemas. */
export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/** What every route module receives. */
export interface RouteContext extends AuthHooks {
  services: Services;
  /** Where the SSH gateway listens (null when it is off); known once the app is ready. */
  sshGateway: () => SshGatewayAddress | null;
}
