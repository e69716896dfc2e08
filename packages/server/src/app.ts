/**
 * Builds the sandboxd HTTP application without listening, so tests can drive it in-process
 * (`app.inject`) or on an ephemeral port. `main.ts` runs it.
 */
import type { IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { engineOptions, type Config } from './config/index.ts';
import { registerErrorHandling, type NotFoundHint } from './api/error-handler.ts';
import { createAuthHooks } from './api/authentication.ts';
import { registerBoundedJsonParser } from './api/json-body.ts';
import { registerOpenApi } from './api/openapi.ts';
import { registerRequestLogging } from './api/request-logging.ts';
import { partAwareSchemaController } from './api/validator-compiler.ts';
import { registerDashboard } from './api/dashboard/serve.ts';
import { registerE2bFacade, sandboxAppUpgradeHandler, sandboxTrafficRewriter } from './api/e2b/index.ts';
import { API_AREAS } from './api/routes/index.ts';
import { SHARED_SCHEMAS } from './api/schemas/common.ts';
import type { App, RouteContext } from './api/types.ts';
import { loggerOptions } from './logger.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { createSandboxServices, createServices, type Services } from './services.ts';
import type { VmEngine } from './core/vm-engine.ts';
import { createEngine, loadBrowserTemplate, loadDesktopTemplate, loadDockerTemplate } from './engine/index.ts';
import { openDatabase, type Database, type StoreQuery } from './store/database.ts';
import { AppUrls } from './core/app-urls.ts';
import { hostOf, previewHostRewriter, previewUpgradeHandler } from './api/preview/proxy-routes.ts';
import { registerUpgradeRouter } from './api/upgrade-router.ts';
import { terminalAttachHandler } from './api/terminal-attach.ts';
import { hostnameOf } from './core/custom-domain-names.ts';
import { vncRelayHandler } from './api/routes/computer-use/index.ts';
import { SshGateway, type SshGatewayAddress } from './ssh/ssh-gateway.ts';
import { appWorkers, runWorkers } from './app-workers.ts';
import { registerHttpMetrics } from './api/metrics-hooks.ts';
import { registerResumeHeader } from './api/resume-hooks.ts';
import { Metrics } from './observability/metrics.ts';
import { storeQuerySpans } from './observability/spans.ts';
import { startTracing } from './observability/tracing.ts';
import { registerHttpTracing } from './api/trace-hooks.ts';
import { tracesUrlOf } from './config/observability.ts';
import { API_VERSION } from './version.ts';
import { countUnendedVmsOfNode } from './store/vms-store.ts';
import { countUnsettledDeliveries } from './store/webhooks-store.ts';

export interface BuildAppOptions {
  config: Config;
  /** An open store; when absent the app opens the configured one and closes it with the app. */
  database?: Database;
  clock?: Clock;
  /** A logger instance, or false for none (tests). Default: pino at the configured level. */
  logger?: FastifyBaseLogger | false;
  /**
   * The VM engine; default the QEMU engine from the configuration. It starts lazily: nothing boots until the
   * first VM is needed or `engine.start()` is called (`warmUp`).
   */
  engine?: VmEngine & { close?(): Promise<void> };
  /**
   * Once ready, start the engine (re-adopting the VMs a previous process left, then their egress policies) and
   * the browser pool in the background: what a server process does (main.ts). Default false: they start on first use.
   */
  warmUp?: boolean;
  /** Called with the app once every route is registered, before it is ready: tests add their checks here. */
  instrument?: (app: App) => void;
}

export interface BuiltApp {
  app: App;
  services: Services;
  /** The admin listener's address (worker control), null when `SANDBOXD_ADMIN_LISTEN=off`. */
  adminUrl: string | null;
  /** Where the other nodes reach this one (the internal listener, the only one serving `/internal/*`); null when off. */
  internalUrl: string | null;
  /** The SSH gateway's bound address, null when `SANDBOXD_SSH_LISTEN=off`. */
  sshGateway: SshGatewayAddress | null;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/** The engine's warnings that are a failed turn of one of its background loops, by the loop's name. */
const ENGINE_LOOP_WARNINGS: Record<string, string> = { POOL_REFILL_FAILED: 'pool_refill', CACHE_PRUNE_FAILED: 'cache_retention' };

export async function buildApp(options: BuildAppOptions): Promise<BuiltApp> {
  const { config } = options;
  // Each statement of the store is timed into the metrics (made below, once the services exist: until then the
  // start-up's statements are not counted) and, with tracing on, is a span of the traced request that ran it.
  const querySpans = tracesUrlOf(config.observability) ? storeQuerySpans(config.server.databaseUrl ? 'postgresql' : 'sqlite') : null;
  let queryMetrics: Metrics | null = null;
  const onQuery = (query: StoreQuery) => {
    querySpans?.(query);
    queryMetrics?.recordStoreQuery(query.verb, query.durationMs);
  };
  const database = options.database ?? (await openDatabase({ dataDir: config.server.dataDir, databaseUrl: config.server.databaseUrl, onQuery }));
  const core = await createServices(config, database, options.clock ?? systemClock);

  const app = Fastify({
    ...(options.logger === undefined
      ? { logger: loggerOptions(config.server.logLevel) }
      : options.logger
        ? { loggerInstance: options.logger }
        : { logger: false }),
    // request-logging.ts writes one line per request instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: config.server.trustProxy,
    bodyLimit: config.server.bodyLimitBytes,
    // Keep a caller's request id for end-to-end tracing when it is well-formed; otherwise make one.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : `req-${randomBytes(8).toString('hex')}`;
    },
    routerOptions: { ignoreTrailingSlash: true },
    // Requests to {vm_id}-{port}.<app domain> are previews whatever their path (preview/proxy-routes.ts).
    // So are requests to verified custom domains (the set is loaded before the server listens).
    // E2B's sandbox addresses (/e2b/sandbox with its headers, {port}-{sandboxID}.<app domain>) come first: api/e2b.
    rewriteUrl: chainRewriters(
      sandboxTrafficRewriter(config.domains.appDomain),
      previewHostRewriter(new AppUrls(config.server.publicUrl, config.domains.appDomain), config.server.trustProxy, core.customDomainHosts),
      config.server.trustProxy,
    ),
    schemaController: partAwareSchemaController(),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Before anything can start a span; closed after every worker stopped (onClose hooks run last-registered first).
  const tracing = await startTracing({
    url: tracesUrlOf(config.observability),
    serviceName: config.observability.otelServiceName,
    serviceVersion: API_VERSION,
    headers: config.observability.otlpHeaders,
    onWarning: (message) => app.log.warn({ component: 'tracing' }, message),
  });
  app.addHook('onClose', () => tracing.shutdown());

  const ownEngine = options.engine ? null : createEngine(engineOptions(config), app.log);
  const engine = options.engine ?? ownEngine!;
  const sandbox = createSandboxServices(core, engine, {
    loadBrowserTemplate: () => loadBrowserTemplate(config.vm.cacheDir, config.browser.browserMemoryMb, app.log),
    loadDesktopTemplate: () => loadDesktopTemplate(config.vm.cacheDir, config.desktop.desktopMemoryMb, app.log),
    loadDockerTemplate: () => loadDockerTemplate(config.vm.cacheDir, config.docker.dockerMemoryMb, app.log),
    log: app.log,
  });
  const services: Services = { ...core, sandbox };
  const sshGateway = new SshGateway(
    { ...config.ssh, dataDir: config.server.dataDir, publicUrl: config.server.publicUrl },
    { ...services, sessions: sandbox.sessions, vms: sandbox.vms },
    app.log.child({ component: 'ssh' }),
  );
  // Before any other hook: the workers start first once ready and their records are the last thing closed.
  const metrics = new Metrics(
    {
      vmsByStatus: () => countUnendedVmsOfNode(database.db, config.cluster.nodeId),
      poolCounts: () => engine.poolCounts(),
      webhookQueueDepth: () => countUnsettledDeliveries(database.db),
    },
    (metric, error) => app.log.warn({ err: error, metric }, 'a metric could not be read; it is left out of this scrape'),
  );
  queryMetrics = metrics;
  ownEngine?.events.on('acquired', ({ fromPool, ms }) => metrics.recordAcquire(fromPool, ms / 1000));
  ownEngine?.events.on('agent-call', ({ call, ms, ok }) => metrics.recordAgentCall(call, ms / 1000, ok));
  // The engine's own loops report through its warnings (engine/index.ts logs them): count those of a loop.
  ownEngine?.events.on('warning', ({ code }) => {
    const loop = ENGINE_LOOP_WARNINGS[code];
    if (loop) metrics.recordBackgroundFailure(loop);
  });
  sandbox.egress.decisions.on('decision', (verdict) => metrics.recordEgressDecision(verdict === 'allowed' ? 'allow' : 'deny'));
  sandbox.executions.events.on('finished', (execution) =>
    metrics.recordExecution(execution.language, execution.status, execution.createdAt, execution.completedAt),
  );
  const { workers, addresses } = appWorkers(app, services, sshGateway, {
    metrics,
    ownEngine,
    ownsDatabase: !options.database,
    warmUp: options.warmUp ?? false,
  });
  runWorkers(app, workers);

  if (tracing.enabled) registerHttpTracing(app);
  registerErrorHandling(app, customDomainHint(services));
  registerRequestLogging(app);
  registerHttpMetrics(app, metrics);
  registerResumeHeader(app);
  registerBoundedJsonParser(app);
  await app.register(formbody);
  // Every area's named schemas before any route: a route may refer to another area's.
  for (const schema of [...SHARED_SCHEMAS, ...API_AREAS.flatMap((area) => area.schemas)]) app.addSchema(schema);
  await registerOpenApi(app, config.server.publicUrl);

  const context: RouteContext = {
    services,
    ...createAuthHooks(app, services.authenticator, config.server.unauthenticatedBodyLimitBytes),
    sshGateway: () => sshGateway.address(),
  };
  for (const area of API_AREAS) area.register(app, context);
  registerE2bFacade(app, context);
  const notFoundHint = customDomainHint(services);
  await registerDashboard(app, { notHere: async (request) => (await notFoundHint(request)) !== null });
  // No internal route here: the cluster's /internal/* is served by the internal listener alone (app-workers.ts).
  registerUpgradeRouter(app, [
    vncRelayHandler(services),
    // Before the preview proxy: {port}-{sandboxID}.<app domain> is the E2B facade's, never a preview host.
    sandboxAppUpgradeHandler(services),
    previewUpgradeHandler(services),
    terminalAttachHandler(services.sandbox.terminals, services.authenticator),
  ]);

  options.instrument?.(app);
  await app.ready();
  return { app, services, adminUrl: addresses.adminUrl, internalUrl: addresses.internalUrl, sshGateway: sshGateway.address() };
}

/** The 404 of an unknown route says so when its Host is a custom domain that is not verified (yet). */
function customDomainHint(services: Services): NotFoundHint {
  return async (request) => {
    const host = hostnameOf(hostOf(request.raw, services.config.server.trustProxy));
    return host ? services.sandbox.customDomains.unverifiedHint(host) : null;
  };
}

/** Fastify's one `rewriteUrl` from two: the first rewriter that claims a request (non-null) decides. */
function chainRewriters(
  first: (request: IncomingMessage, host: string | undefined) => string | null,
  then: (request: IncomingMessage) => string,
  trustProxy: boolean,
): (request: IncomingMessage) => string {
  return (request) => first(request, hostOf(request, trustProxy)) ?? then(request);
}
