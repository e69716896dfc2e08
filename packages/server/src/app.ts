/**
 * Builds the sandboxd HTTP application without listening, so tests can drive it in-process
 * (`app.inject`) or on an ephemeral port. `main.ts` runs it.
 */
import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { registerErrorHandling } from './api/error-handler.ts';
import { createAuthHook } from './api/authentication.ts';
import { registerOpenApi } from './api/openapi.ts';
import { registerRequestLogging } from './api/request-logging.ts';
import { partAwareSchemaController } from './api/validator-compiler.ts';
import { registerApiKeyRoutes } from './api/routes/api-keys/index.ts';
import { ApiKeyBody, ApiKeyRecord } from './api/routes/api-keys/schemas.ts';
import { registerTokenRoute } from './api/routes/auth/token.ts';
import { registerHealthRoutes } from './api/routes/health.ts';
import { registerNotImplementedRoutes } from './api/routes/not-implemented.ts';
import { SHARED_SCHEMAS } from './api/schemas/common.ts';
import type { App, RouteContext } from './api/types.ts';
import { loggerOptions } from './logger.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { createServices, type Services } from './services.ts';
import { openDatabase, type Database } from './store/database.ts';

export interface BuildAppOptions {
  config: Config;
  /** An open store; when absent the app opens the configured one and closes it with the app. */
  database?: Database;
  clock?: Clock;
  /** A logger instance, or false for none (tests). Default: pino at the configured level. */
  logger?: FastifyBaseLogger | false;
}

export interface BuiltApp {
  app: App;
  services: Services;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export async function buildApp(options: BuildAppOptions): Promise<BuiltApp> {
  const { config } = options;
  const database = options.database ?? (await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl }));
  const services = await createServices(config, database, options.clock ?? systemClock);

  const app = Fastify({
    ...(options.logger === undefined ? { logger: loggerOptions(config.logLevel) } : options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // request-logging.ts writes one line per request instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.trustProxy,
    bodyLimit: config.bodyLimitBytes,
    // Keep a caller's request id for end-to-end tracing when it is well-formed; otherwise make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req-${randomBytes(8).toString('hex')}`;
    },
    routerOptions: { ignoreTrailingSlash: true },
    schemaController: partAwareSchemaController(),
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (!options.database) app.addHook('onClose', async () => database.close());

  registerErrorHandling(app);
  registerRequestLogging(app);
  await app.register(formbody);
  for (const schema of [...SHARED_SCHEMAS, ApiKeyRecord, ApiKeyBody]) app.addSchema(schema);
  await registerOpenApi(app, config.publicUrl);

  const context: RouteContext = { services, requireAuth: createAuthHook(app, services.authenticator) };
  registerHealthRoutes(app, context);
  registerTokenRoute(app, context);
  registerApiKeyRoutes(app, context);
  registerNotImplementedRoutes(app, context);

  await app.ready();
  return { app, services };
}
