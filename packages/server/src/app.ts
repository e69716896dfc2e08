/**
 * Builds the sandboxd HTTP application without listening, so tests can drive it in-process
 * (`app.inject`) or on an ephemeral port. `main.ts` runs it.
 */
import { randomBytes } from 'node:crypto';
import formbody from '@fastify/formbody';
import Fastify, { LogController, type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.ts';
import { registerErrorHandling, type NotFoundHint } from './api/error-handler.ts';
import { createAuthHooks } from './api/authentication.ts';
import { registerBoundedJsonParser } from './api/json-body.ts';
import { registerOpenApi } from './api/openapi.ts';
import { registerRequestLogging } from './api/request-logging.ts';
import { partAwareSchemaController } from './api/validator-compiler.ts';
import { registerApiKeyRoutes } from './api/routes/api-keys/index.ts';
import { ApiKeyBody, ApiKeyRecord } from './api/routes/api-keys/schemas.ts';
import { registerTokenRoute } from './api/routes/auth/token.ts';
import { registerSessionSignInRoutes } from './api/routes/auth/session.ts';
import { registerDashboard } from './api/dashboard/serve.ts';
import { registerHealthRoutes } from './api/routes/health.ts';
import { registerPublicWorkerRoutes } from './api/routes/workers/public-routes.ts';
import { DeploymentDrainRequest } from './api/routes/workers/schemas.ts';
import { startAdminListener, type AdminListener } from './api/admin-listener.ts';
import { startInternalListener, type InternalListener } from './api/internal-listener.ts';
import { registerAuditRoutes } from './api/routes/audit/index.ts';
import { AUDIT_SCHEMAS } from './api/routes/audit/schemas.ts';
import { registerEventRoutes } from './api/routes/events/index.ts';
import { registerWebhookRoutes } from './api/routes/webhooks/index.ts';
import { WEBHOOK_SCHEMAS } from './api/routes/webhooks/schemas.ts';
import { SHARED_SCHEMAS } from './api/schemas/common.ts';
import type { App, RouteContext } from './api/types.ts';
import { loggerOptions } from './logger.ts';
import { systemClock, type Clock } from './core/clock.ts';
import type { AttemptReport } from './core/webhooks/dispatcher.ts';
import { createSandboxServices, createServices, type Services } from './services.ts';
import type { VmEngine } from './core/vm-engine.ts';
import { createEngine, loadBrowserTemplate, loadDesktopTemplate } from './engine/index.ts';
import { registerExecutionRoutes } from './api/routes/execution/index.ts';
import { EXECUTION_SCHEMAS } from './api/routes/execution/schemas.ts';
import { registerFileRoutes } from './api/routes/files/index.ts';
import { FileListing } from './api/routes/files/list.ts';
import { DailyUsageList, registerDailyUsage } from './api/routes/usage/daily.ts';
import { ADMIN_SCHEMAS, registerAdminRoutes } from './api/routes/admin/index.ts';
import { registerSessionRoutes } from './api/routes/sessions/index.ts';
import { SESSION_SCHEMAS } from './api/routes/sessions/schemas.ts';
import { registerVmRoutes } from './api/routes/vms/index.ts';
import { registerEgressRoutes } from './api/routes/egress/index.ts';
import { EGRESS_SCHEMAS } from './api/routes/egress/schemas.ts';
import { registerSnapshotRoutes } from './api/routes/snapshots/index.ts';
import { SNAPSHOT_SCHEMAS } from './api/routes/snapshots/schemas.ts';
import { registerVolumeRoutes } from './api/routes/volumes/index.ts';
import { VOLUME_SCHEMAS } from './api/routes/volumes/schemas.ts';
import { registerTemplateRoutes } from './api/routes/templates/index.ts';
import { TEMPLATE_SCHEMAS } from './api/routes/templates/schemas.ts';
import { registerCliAuthRoutes } from './api/routes/cli-auth/index.ts';
import { CLI_AUTH_SCHEMAS } from './api/routes/cli-auth/schemas.ts';
import { openDatabase, type Database } from './store/database.ts';
import { AppUrls } from './core/app-urls.ts';
import { registerAppRoutes } from './api/routes/apps/index.ts';
import { APP_SCHEMAS } from './api/routes/apps/schemas.ts';
import { hostOf, previewHostRewriter, previewUpgradeHandler, registerPreviewRoutes } from './api/preview/proxy-routes.ts';
import { registerUpgradeRouter } from './api/upgrade-router.ts';
import { terminalAttachHandler } from './api/terminal-attach.ts';
import { registerPtyRoutes } from './api/routes/pty/routes.ts';
import { registerCustomDomainRoutes } from './api/routes/custom-domains/index.ts';
import { CUSTOM_DOMAIN_SCHEMAS } from './api/routes/custom-domains/schemas.ts';
import { hostnameOf } from './core/custom-domain-names.ts';
import type { CheckReport } from './core/custom-domain-checker.ts';
import { PTY_SCHEMAS } from './api/routes/pty/schemas.ts';
import { registerBrowserRoutes } from './api/routes/browser/index.ts';
import { COMPUTER_USE_SCHEMAS, registerComputerUseRoutes, vncRelayHandler } from './api/routes/computer-use/index.ts';
import { BROWSER_SCHEMAS } from './api/routes/browser/schemas.ts';
import { registerMcpRoutes } from './api/routes/mcp/index.ts';
import { registerSshKeyRoutes } from './api/routes/ssh-keys/index.ts';
import { SSH_KEY_SCHEMAS } from './api/routes/ssh-keys/schemas.ts';
import { registerVaultRoutes } from './api/routes/vaults/index.ts';
import { VAULT_SCHEMAS } from './api/routes/vaults/schemas.ts';
import { SshGateway, type SshGatewayAddress } from './ssh/ssh-gateway.ts';

export interface BuildAppOptions {
  config: Config;
  /** An open store; when absent the app opens the configured one and closes it with the app. */
  database?: Database;
  clock?: Clock;
  /** A logger instance, or false for none (tests). Default: pino at the configured level. */
  logger?: FastifyBaseLogger | false;
  /**
   * The VM engine; default the QEMU engine from the configuration. It starts lazily: nothing boots until the
   * first VM is needed or `engine.start()` is called (main.ts warms it up at start).
   */
  engine?: VmEngine & { close?(): Promise<void> };
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

export async function buildApp(options: BuildAppOptions): Promise<BuiltApp> {
  const { config } = options;
  const database = options.database ?? (await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl }));
  const core = await createServices(config, database, options.clock ?? systemClock);

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
    // Requests to {vm_id}-{port}.<app domain> are previews whatever their path (preview/proxy-routes.ts).
    // So are requests to verified custom domains (the set is loaded before the server listens).
    rewriteUrl: previewHostRewriter(new AppUrls(config.publicUrl, config.appDomain), config.trustProxy, core.customDomainHosts),
    schemaController: partAwareSchemaController(),
  }).withTypeProvider<TypeBoxTypeProvider>();

  const engine = options.engine ?? createEngine(config, app.log);
  const sandbox = createSandboxServices(core, engine, { loadBrowserTemplate: () => loadBrowserTemplate(config, app.log), loadDesktopTemplate: () => loadDesktopTemplate(config, app.log), log: app.log });
  const services: Services = { ...core, sandbox };
  recordStartAndStop(app, services, { ownEngine: options.engine ? null : engine, ownsDatabase: !options.database });

  registerErrorHandling(app, customDomainHint(services));
  registerRequestLogging(app);
  registerBoundedJsonParser(app);
  await app.register(formbody);
  for (const schema of [...SHARED_SCHEMAS, ApiKeyRecord, ApiKeyBody, ...WEBHOOK_SCHEMAS, ...AUDIT_SCHEMAS, ...SESSION_SCHEMAS, ...EXECUTION_SCHEMAS, ...CLI_AUTH_SCHEMAS, ...APP_SCHEMAS, ...PTY_SCHEMAS, ...CUSTOM_DOMAIN_SCHEMAS, ...SNAPSHOT_SCHEMAS, ...VOLUME_SCHEMAS, ...TEMPLATE_SCHEMAS, ...BROWSER_SCHEMAS, ...COMPUTER_USE_SCHEMAS, FileListing, DailyUsageList, ...ADMIN_SCHEMAS, ...SSH_KEY_SCHEMAS, ...EGRESS_SCHEMAS, ...VAULT_SCHEMAS, DeploymentDrainRequest]) app.addSchema(schema);
  await registerOpenApi(app, config.publicUrl);

  const context: RouteContext = { services, ...createAuthHooks(app, services.authenticator, config.unauthenticatedBodyLimitBytes) };
  registerHealthRoutes(app, context);
  registerTokenRoute(app, context);
  registerSessionSignInRoutes(app, context);
  registerApiKeyRoutes(app, context);
  registerWebhookRoutes(app, context);
  registerAuditRoutes(app, context);
  registerEventRoutes(app, context);
  registerSessionRoutes(app, context);
  registerVmRoutes(app, context);
  registerEgressRoutes(app, context);
  registerVaultRoutes(app, context);
  registerSnapshotRoutes(app, context);
  registerVolumeRoutes(app, context);
  registerTemplateRoutes(app, context);
  registerExecutionRoutes(app, context);
  registerFileRoutes(app, context);
  registerDailyUsage(app, context);
  registerAdminRoutes(app, context);
  registerCliAuthRoutes(app, context);
  registerAppRoutes(app, context);
  registerPreviewRoutes(app, context);
  registerPtyRoutes(app, context);
  registerCustomDomainRoutes(app, context);
  registerBrowserRoutes(app, context);
  registerComputerUseRoutes(app, context);
  registerMcpRoutes(app, context);
  const sshGateway = runSshGateway(app, services);
  registerSshKeyRoutes(app, context, () => sshGateway.address());
  registerPublicWorkerRoutes(app);
  const notFoundHint = customDomainHint(services);
  await registerDashboard(app, { notHere: async (request) => (await notFoundHint(request)) !== null });
  // No internal route here: the cluster's /internal/* is served by the internal listener alone (runClusterNode).
  registerUpgradeRouter(app, [vncRelayHandler(services), previewUpgradeHandler(services), terminalAttachHandler(services.sandbox.terminals, services.authenticator)]);

  const { admin, internal } = runClusterNode(app, services);
  runWebhookDispatcher(app, services);
  runCustomDomains(app, services);
  runEgress(app, services);

  options.instrument?.(app);
  await app.ready();
  return { app, services, adminUrl: admin.url, internalUrl: internal.url, sshGateway: sshGateway.address() };
}

/**
 * What a start and a stop of this node mean for its records. At start, executions this node was running are
 * over (their runner died with the previous process): they end as failed, before the first request. At a
 * graceful stop (after requests stopped), the executions it runs end as failed too, and the VMs it runs are
 * killed and recorded ended, unless SANDBOXD_KEEP_VMS_ON_SHUTDOWN keeps them for the next start; then the
 * engine (when the app owns it) and the store close.
 */
function recordStartAndStop(app: App, services: Services, owns: { ownEngine: { close?(): Promise<void> } | null; ownsDatabase: boolean }): void {
  const { executions, vms, templates, browserService, computerUse } = services.sandbox;
  app.addHook('onReady', async () => {
    browserService.begin();
    await computerUse.recover(app.log);
    const ended = await executions.endRunsOfThisNode('restarted');
    if (ended > 0) app.log.warn({ executions: ended }, 'executions left running by the previous server process recorded as failed');
    const builds = await templates.failInterruptedBuilds();
    if (builds > 0) app.log.warn({ templates: builds }, 'template builds left running by the previous server process recorded as failed');
  });
  app.addHook('onClose', async () => {
    try {
      await executions.endRunsOfThisNode('stopping');
      await templates.stop();
      // Its pages are this process's connections: the sessions end here, and their VMs with them.
      await browserService.close();
      await computerUse.settled();
      if (owns.ownEngine) {
        const killVms = !services.config.keepVmsOnShutdown;
        if (killVms) await vms.stop();
        await owns.ownEngine.close?.();
        if (killVms) await vms.stop();
      }
    } catch (error) {
      app.log.error({ err: error }, 'recording the stop failed; the next start reconciles what is left');
    }
    // Last, so the node's row says `left` only once it runs nothing.
    await services.sandbox.nodes.stop().catch((error: unknown) => app.log.error({ err: error }, 'recording this node as left failed; it will be declared dead'));
    if (owns.ownsDatabase) await services.database.close();
  });
}

/**
 * This node in the cluster for as long as the app: its internal listener (the cluster's /internal/* routes)
 * bound first, so the node registers the address it really serves at; then registered and heartbeating (single
 * node too: one row), and its admin listener (worker control) serving beside it. Both listeners stop before the
 * server waits for open requests, the registration last (recordStartAndStop).
 */
function runClusterNode(app: App, services: Services): { admin: AdminListener; internal: InternalListener } {
  const admin: AdminListener = { url: null, close: async () => {} };
  const internal: InternalListener = { url: null, close: async () => {} };
  const { killQueue, nodes } = services.sandbox;
  app.addHook('onReady', async () => {
    const internalListener = await startInternalListener(services.config, services, app.log);
    internal.url = internalListener.url;
    internal.close = internalListener.close;
    nodes.internalUrl = internalListener.url ?? '';
    await nodes.start();
    await killQueue?.start();
    const listener = await startAdminListener(services.config, nodes, services.sandbox.vms, app.log);
    admin.url = listener.url;
    admin.close = listener.close;
  });
  app.addHook('preClose', async () => {
    await admin.close();
    await internal.close();
    await killQueue?.stop();
  });
  return { admin, internal };
}

/**
 * The SSH gateway for as long as the app: it listens once the app is ready and stops (its connections closed)
 * before the server waits for open requests.
 */
function runSshGateway(app: App, services: Services): SshGateway {
  const { sessions, vms } = services.sandbox;
  const gateway = new SshGateway(services.config, { ...services, sessions, vms }, app.log.child({ component: 'ssh' }));
  app.addHook('onReady', async () => {
    await gateway.start();
  });
  app.addHook('preClose', async () => gateway.close());
  return gateway;
}

/**
 * Runs webhook delivery for as long as the app: it stops before the server waits for open requests
 * (attempts in flight are handed back to the queue), so the store is still open while it settles.
 */
function runWebhookDispatcher(app: App, services: Services): void {
  const dispatcher = services.webhookDispatcher;
  dispatcher.on('attempt', (report: AttemptReport) => app.log.debug({ webhook: report }, 'webhook attempt'));
  dispatcher.on('failure', (error: unknown) => app.log.error({ err: error }, 'webhook dispatcher pass failed; retrying on the next one'));
  app.addHook('onReady', async () => dispatcher.start());
  app.addHook('preClose', async () => dispatcher.stop());
}

/**
 * Custom domains for as long as the app: the routing set is loaded before the server serves (and reloaded
 * for changes made on other nodes), and the checker re-checks pending claims; both stop before the server
 * waits for open requests, so the store is still open while a check in flight settles.
 */
function runCustomDomains(app: App, services: Services): void {
  const hosts = services.customDomainHosts;
  const checker = services.sandbox.customDomainChecker;
  hosts.on('failure', (error: unknown) => app.log.error({ err: error }, 'reloading the verified custom domains failed; the previous set is kept'));
  checker.on('check', (report: CheckReport) => app.log.debug({ customDomain: report }, 'custom domain checked'));
  checker.on('failure', (error: unknown) => app.log.error({ err: error }, 'custom domain check pass failed; retrying on the next one'));
  app.addHook('onReady', async () => {
    await hosts.start();
    checker.start();
  });
  app.addHook('preClose', async () => {
    hosts.stop();
    await checker.stop();
  });
}

/**
 * Egress policies (and the vault's request log) for as long as the app: started once the server is ready (after the engine re-adopted its
 * VMs, whose policies it re-applies); stopped after the VMs, so their rules are dropped with them unless they
 * are kept running, in which case the rules stay and fail closed until the next start.
 */
function runEgress(app: App, services: Services): void {
  const egress = services.sandbox.egress;
  app.addHook('onReady', async () => {
    void egress.start().catch((error: unknown) => app.log.error({ err: error }, 'egress policies could not be started; restricted policies are refused'));
    services.sandbox.vaultGateway.start();
  });
  app.addHook('onClose', async () => {
    await egress.stop({ vmsKept: services.config.keepVmsOnShutdown }).catch((error: unknown) => app.log.error({ err: error }, 'stopping egress enforcement failed'));
    await services.sandbox.vaultGateway.stop();
  });
}

/** The 404 of an unknown route says so when its Host is a custom domain that is not verified (yet). */
function customDomainHint(services: Services): NotFoundHint {
  return async (request) => {
    const host = hostnameOf(hostOf(request.raw, services.config.trustProxy));
    return host ? services.sandbox.customDomains.unverifiedHint(host) : null;
  };
}
