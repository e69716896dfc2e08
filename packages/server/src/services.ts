/**
 * Wires the core services over one store. Used by the HTTP app and by the offline admin commands, so
 * both act on the store the same way.
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP, isIPv4 } from 'node:net';
import type { Config } from './config/index.ts';
import { ApiKeyService } from './core/api-keys.ts';
import { BackgroundFailures } from './core/background-timers.ts';
import { SshKeyService } from './core/ssh-keys.ts';
import { createAccessTokenIssuer, type AccessTokenIssuer } from './core/auth/access-tokens.ts';
import { ConsoleSessions } from './core/auth/console-sessions.ts';
import { SignInThrottle } from './core/auth/sign-in-throttle.ts';
import { createPreviewTokens, type PreviewTokens } from './core/auth/preview-tokens.ts';
import { SessionTokens } from './core/auth/session-tokens.ts';
import { AppUrls } from './core/app-urls.ts';
import { PreviewAccess } from './core/previews.ts';
import { ShareService } from './core/shares.ts';
import { CustomDomainChecker } from './core/custom-domain-checker.ts';
import { CustomDomainHosts } from './core/custom-domain-hosts.ts';
import { normalizeDomain, type ReservedNames } from './core/custom-domain-names.ts';
import { CustomDomainService, MAX_CUSTOM_DOMAINS_PER_USER } from './core/custom-domains.ts';
import { createTxtResolver } from './dns/txt-resolver.ts';
import { TerminalService } from './core/terminals.ts';
import { Authenticator } from './core/authenticator.ts';
import { EventNotifier } from './core/events.ts';
import { systemClock, type Clock } from './core/clock.ts';
import { UserService } from './core/users.ts';
import { AuditLog } from './core/audit.ts';
import { CliAuthService } from './core/cli-auth.ts';
import { EventFeed } from './core/event-feed.ts';
import { SignInService } from './core/sign-in.ts';
import { forbiddenAddressReason } from './host/forbidden-addresses.ts';
import { WebhookDispatcher } from './core/webhooks/dispatcher.ts';
import { SecretBox } from './core/secrets/secret-box.ts';
import { WebhookService } from './core/webhooks/webhook-service.ts';
import { createHttpSender } from './webhooks/http-sender.ts';
import { ExecutionService } from './core/executions.ts';
import { FileService } from './core/files.ts';
import { ProcessService } from './core/processes.ts';
import { AppService } from './core/apps/app-service.ts';
import { AppSupervisor } from './core/apps/supervisor.ts';
import { PythonContextService } from './core/python-contexts.ts';
import { PlanLimiter } from './core/limits.ts';
import { SessionService } from './core/sessions.ts';
import type { TemplateImage, VmEngine } from './core/vm-engine.ts';
import { applySessionEnv, trustVaultCa, VmService } from './core/vms/index.ts';
import { SnapshotService } from './core/snapshots.ts';
import { VolumeService } from './core/volumes.ts';
import { NetworkService } from './core/networks.ts';
import { NetworkRelay } from './net/private-network/network-relay.ts';
import { privateNetworkTableName } from './net/private-network/ruleset.ts';
import { TemplateService } from './core/templates.ts';
import { createGitFetcher } from './git/bare-clone.ts';
import { BUILTIN_SOURCE_NAMES, VmSources } from './core/vm-sources.ts';
import { ComputerUseService, fitDesktopScreen } from './core/computer-use/computer-use-service.ts';
import { DESKTOP_TEMPLATE_ID, DOCKER_TEMPLATE_ID } from './model.ts';
import { NodeRegistry } from './core/cluster/node-registry.ts';
import { ClusterStorageService } from './core/cluster-storage.ts';
import { InternalAuth } from './core/cluster/internal-auth.ts';
import { ClusterBrowserRouter } from './core/cluster/browser-router.ts';
import { Ownership } from './core/cluster/ownership.ts';
import { Placement } from './core/cluster/placement.ts';
import { HttpRemoteNodes } from './cluster/http-remote-nodes.ts';
import { PgBossKillQueue } from './cluster/pg-boss-kill-queue.ts';
import { API_VERSION } from './version.ts';
import type { FastifyBaseLogger } from 'fastify';
import { createViewerTokens, type ViewerTokens } from './core/computer-use/viewer-tokens.ts';
import type { BrowserApi } from './core/browser/browser-api.ts';
import { BrowserService } from './core/browser/browser-service.ts';
import { PlaywrightDriver } from './browser/playwright-driver.ts';
import { createObjectStore } from './storage/index.ts';
import { EgressService } from './core/egress.ts';
import { VaultCa } from './core/vault/vault-ca.ts';
import { VaultGateway } from './core/vault/vault-gateway.ts';
import { resolveVaultKey, type VaultKey } from './core/vault/vault-key.ts';
import { VaultService } from './core/vault/vault-service.ts';
import { createCertificateAuthority, LeafCertificates } from './net/egress/certificate-authority.ts';
import { EgressEnforcer } from './net/egress/egress-enforcer.ts';
import { parseUpstream } from './net/egress/policy-resolver.ts';
import { egressTableName } from './net/egress/ruleset.ts';
import { hostDnsServers } from './vm/qemu/network-guard.ts';
import type { Database } from './store/database.ts';
import { readOrInitSetting } from './store/settings-store.ts';

export interface CoreServices {
  config: Config;
  /** Where the background loops report a failed turn (app-workers.ts logs and counts them). */
  backgroundFailures: BackgroundFailures;
  database: Database;
  clock: Clock;
  /** Wakes outbox consumers after a commit that recorded events. */
  events: EventNotifier;
  users: UserService;
  apiKeys: ApiKeyService;
  /** Users' SSH public keys (the SSH gateway's logins). */
  sshKeys: SshKeyService;
  tokens: AccessTokenIssuer;
  /** Signs private share links and the preview cookies they set. */
  previewTokens: PreviewTokens;
  /** Tokens for one session (the E2B facade's in-sandbox access and traffic tokens). */
  sessionTokens: SessionTokens;
  /** Signs desktop viewer URLs, their page cookies and their VNC WebSocket tokens. */
  viewerTokens: ViewerTokens;
  authenticator: Authenticator;
  /** The web console's server-side sessions (sign-out and key deletion end them at once). */
  consoleSessions: ConsoleSessions;
  audit: AuditLog;
  signIn: SignInService;
  webhooks: WebhookService;
  /** Started by the HTTP app (buildApp), never by the admin command. */
  webhookDispatcher: WebhookDispatcher;
  /** Live outbox reader behind GET /v1/events/stream. */
  eventFeed: EventFeed;
  /** Command-line login (device authorization with PKCE). */
  cliAuth: CliAuthService;
  /**
   * Which Host names are verified custom domains, for the synchronous routing decision (`rewriteUrl`); the
   * HTTP app loads it before it serves and reloads it every SANDBOXD_CUSTOM_DOMAIN_REFRESH_SECONDS.
   */
  customDomainHosts: CustomDomainHosts;
  /** Seals secrets at rest with a key derived from the server's secret (webhook secrets, browser credentials). */
  secretBox: SecretBox;
  /** Signs and checks requests between the nodes of the cluster. */
  internalAuth: InternalAuth;
  /** Users' vaults of secrets (never returned, never in a VM). */
  vaults: VaultService;
  /** Seals vault secrets and the vault CA's key: SANDBOXD_VAULT_KEY, else DATA_DIR/vault.key (never the store). */
  vaultBox: VaultKey;
}

/** The token signing secret: from configuration, or generated once and shared through the store. */
async function resolveAuthSecret(config: Config, database: Database): Promise<string> {
  if (config.auth.authSecret) return config.auth.authSecret;
  return readOrInitSetting(database.db, 'auth.token_secret', randomBytes(48).toString('base64url'));
}

/** Names no custom domain may take: the public URL's host, the listen address when it is a name, the app domain. */
function reservedNames(config: Config): ReservedNames {
  const apiHosts = [
    new AppUrls(config.server.publicUrl, config.domains.appDomain).apiHostname,
    ...(isIP(config.server.host) === 0 ? [normalizeDomain(config.server.host)] : []),
  ];
  return { apiHosts, appDomain: config.domains.appDomain };
}

/** Services that need no VM engine (the admin command uses only these). */
export async function createServices(config: Config, database: Database, clock: Clock = systemClock): Promise<CoreServices> {
  const authSecret = await resolveAuthSecret(config, database);
  const tokens = createAccessTokenIssuer(authSecret, config.auth.accessTokenTtlSeconds);
  const events = new EventNotifier();
  const users = new UserService(database, config.auth.plans, config.auth.defaultPlan, clock);
  const audit = new AuditLog(database, clock);
  const box = new SecretBox(authSecret);
  const sender = createHttpSender({ refuseAddress: config.webhooks.webhookAllowPrivate ? () => null : forbiddenAddressReason });
  const webhookDispatcher = new WebhookDispatcher(database, clock, events, box, sender, {
    pollIntervalMs: config.webhooks.eventPollIntervalMs,
    retryScheduleMs: config.webhooks.webhookRetryScheduleMs,
    maxAttempts: config.webhooks.webhookMaxAttempts,
    timeoutMs: config.webhooks.webhookTimeoutMs,
    concurrency: config.webhooks.webhookConcurrency,
  });
  const apiKeys = new ApiKeyService(database, clock, events);
  const consoleSessions = new ConsoleSessions(database, clock, authSecret, config.auth.consoleSessionTtlSeconds ?? config.auth.accessTokenTtlSeconds);
  const authenticator = new Authenticator(database, tokens, clock, consoleSessions);
  const signInThrottle = new SignInThrottle(database, clock, {
    windowSeconds: config.auth.signInWindowSeconds,
    maxFailuresPerUsername: config.auth.signInMaxFailuresPerUsername,
    maxFailuresPerSource: config.auth.signInMaxFailuresPerAddress,
  });
  const vaultBox = await resolveVaultKey({ configuredKey: config.vault.vaultKey, dataDir: config.server.dataDir, legacySecret: authSecret }, database);
  const clusterSecret =
    config.cluster.clusterSecret ?? (await readOrInitSetting(database.db, 'cluster.internal_secret', randomBytes(48).toString('base64url')));
  return {
    backgroundFailures: new BackgroundFailures(),
    internalAuth: new InternalAuth(clusterSecret, config.cluster.nodeId),
    config,
    database,
    clock,
    events,
    users,
    apiKeys,
    sshKeys: new SshKeyService(database, clock, events),
    tokens,
    previewTokens: createPreviewTokens(authSecret),
    sessionTokens: new SessionTokens(authSecret),
    viewerTokens: createViewerTokens(authSecret),
    authenticator,
    consoleSessions,
    audit,
    signIn: new SignInService(users, tokens, audit, signInThrottle, authenticator),
    webhooks: new WebhookService(database, clock, events, box, webhookDispatcher, sender, {
      allowPrivate: config.webhooks.webhookAllowPrivate,
      secretGraceSeconds: config.webhooks.webhookSecretGraceSeconds,
      timeoutMs: config.webhooks.webhookTimeoutMs,
    }),
    webhookDispatcher,
    eventFeed: new EventFeed(database, events, config.webhooks.eventPollIntervalMs),
    cliAuth: new CliAuthService(database, clock, apiKeys, { ttlSeconds: config.auth.cliAuthTtlSeconds, intervalSeconds: config.auth.cliAuthIntervalSeconds }),
    customDomainHosts: new CustomDomainHosts(database, config.domains.customDomainRefreshSeconds * 1000, reservedNames(config)),
    secretBox: box,
    vaults: new VaultService(database, clock, events, vaultBox, { logRetentionDays: config.vault.vaultLogRetentionDays }),
    vaultBox,
  };
}

/** Sessions, VMs, executions and files: the services that run on a VM engine. */
export interface SandboxServices {
  engine: VmEngine;
  limiter: PlanLimiter;
  sessions: SessionService;
  vms: VmService;
  /** Templates and snapshots by name, resolved for the engine. */
  sources: VmSources;
  snapshots: SnapshotService;
  /** Persistent volumes (VMs mount them through `vms`). */
  volumes: VolumeService;
  /** Private networks between a user's VMs (the relay on this node). Started by the HTTP app. */
  networks: NetworkService;
  /** Templates built from OCI images: build jobs, their logs, deletion. */
  templates: TemplateService;
  executions: ExecutionService;
  /** A session's Python contexts (interpreters of their own in its VM). */
  contexts: PythonContextService;
  files: FileService;
  /** Background processes in sessions' VMs (output kept for re-attaching, stdin, signals). */
  processes: ProcessService;
  /** Where VM ports are served (path and host name). */
  appUrls: AppUrls;
  shares: ShareService;
  /** Who may open a preview, and the tunnel to it. */
  previews: PreviewAccess;
  /** App deployments: versions brought up from a folder and a manifest, served at the app's host. */
  apps: AppService;
  /** Keeps live apps' replicas running (restarts, replacements); started by the HTTP app. */
  appSupervisor: AppSupervisor;
  /** PTY sessions in VMs. */
  terminals: TerminalService;
  /** Custom domains: claims, DNS verification, and where a verified domain's requests go. */
  customDomains: CustomDomainService;
  /** Re-checks pending custom domain claims; started by the HTTP app (buildApp). */
  customDomainChecker: CustomDomainChecker;
  /** Browser sessions, interactions, renders, usage and stored credentials (Chromium in VMs). */
  /** Browser sessions and renders (the API's view). */
  browser: BrowserApi;
  /** The same service with its start and stop (what the app and the benchmark drive). */
  browserService: BrowserService;
  /** Desktop sessions: the computer-use proxy, the viewer, recordings. */
  computerUse: ComputerUseService;
  /** This node in the deployment's node table: registration, heartbeats, dead nodes, drain state. */
  nodes: NodeRegistry;
  /** This node's answer to "local, or which node owns it?" (every service that asks shares it). */
  ownership: Ownership;
  /** Kills of VMs on other nodes, through their pg-boss queues (cluster mode; null with the embedded store). Started by the HTTP app. */
  killQueue: PgBossKillQueue | null;
  /** Egress policies of VMs and sessions, their enforcement on this host and the egress log. Started by the HTTP app. */
  egress: EgressService;
  /** The vault's side of egress: TLS interception for bound hosts, placeholder swaps, the request log. */
  vaultGateway: VaultGateway;
  /** The deployment's CA that guests of vault sessions trust. */
  vaultCa: VaultCa;
  /** The cluster's object store of paused VMs, snapshots and templates: usage, caches, garbage collection. Started by the HTTP app. */
  storage: ClusterStorageService;
}

/** Everything the HTTP app uses. */
export interface Services extends CoreServices {
  sandbox: SandboxServices;
}

/** How the sandbox services reach what lives outside the core (defaults: the real ones from the configuration). */
export interface SandboxDependencies {
  /** The built-in browser template's files (building its image on first use). */
  loadBrowserTemplate: () => Promise<TemplateImage>;
  /** The built-in desktop template's files (building its image on first use). */
  loadDesktopTemplate: () => Promise<TemplateImage>;
  /** The built-in docker template's files (building its image on first use). */
  loadDockerTemplate: () => Promise<TemplateImage>;
  /** Where background work (heartbeats) reports. */
  log: FastifyBaseLogger;
}

export function createSandboxServices(core: CoreServices, engine: VmEngine, dependencies: SandboxDependencies): SandboxServices {
  const { config, database, clock, events } = core;
  const limiter = new PlanLimiter(config.auth.plans, clock);
  const sessions = new SessionService(database, clock, events, {
    vmLifetimeSeconds: config.vm.defaultVmLifetimeSeconds,
    memoryMb: config.vm.defaultMemoryMb,
    vcpuCount: config.vm.defaultVcpus,
  });
  const ownership = new Ownership(engine.nodeId);
  const sources = new VmSources(
    database,
    ownership,
    {
      [DESKTOP_TEMPLATE_ID]: {
        load: dependencies.loadDesktopTemplate,
        shape: { vcpuCount: config.desktop.desktopVcpus, memoryMb: config.desktop.desktopMemoryMb },
      },
      [DOCKER_TEMPLATE_ID]: {
        load: dependencies.loadDockerTemplate,
        shape: { vcpuCount: config.docker.dockerVcpus, memoryMb: config.docker.dockerMemoryMb },
      },
    },
    engine.portableCaptures,
  );
  const placement = new Placement(database, clock, engine.nodeId, config.cluster.nodeDeadAfterSeconds * 1000);
  // Kills of other nodes' VMs go through their queues: only a cluster (a PostgreSQL store) has other nodes.
  const killQueue: PgBossKillQueue | null = config.server.databaseUrl
    ? new PgBossKillQueue(
        database,
        {
          connectionString: config.server.databaseUrl,
          ownership,
          strictOwnership: config.cluster.strictKillOwnership,
          killLocal: (vmId): Promise<void> => vms.killHere(vmId),
        },
        dependencies.log,
      )
    : null;
  const remoteNodes = new HttpRemoteNodes(database, core.internalAuth);
  const vms = new VmService(database, engine, limiter, clock, events, sources, remoteNodes, placement, killQueue, core.backgroundFailures);
  const vaultCa = new VaultCa(database, core.vaultBox, createCertificateAuthority);
  const vaultGateway = new VaultGateway(database, clock, events, core.vaultBox, config.vault.vaultLogRetentionDays, core.backgroundFailures);
  let leafs: Promise<LeafCertificates> | null = null;
  const upstreamCa = config.vault.vaultUpstreamCaFile ? [fs.readFileSync(config.vault.vaultUpstreamCaFile, 'utf8')] : [];
  // Enforcing restricted egress policies needs root (nftables, listeners the firewall redirects to).
  const egressEnforcer =
    process.getuid?.() === 0
      ? new EgressEnforcer({
          table: egressTableName(`${engine.nodeId}:${config.server.dataDir}`),
          upstreams: async () => (config.egress.egressDnsServers ?? (await hostDnsServers()).filter((address) => isIPv4(address))).map(parseUpstream),
          onAttempt: (attempt) => egress.record(attempt),
          vault: {
            plan: (vmId, scheme, name, address) => vaultGateway.plan(vmId, scheme, name, address),
            rewrite: (vmId, request) => vaultGateway.rewrite(vmId, request),
            leafs: () => (leafs ??= vaultCa.material().then((ca) => new LeafCertificates(ca))),
            upstreamCa,
          },
        })
      : null;
  const egress: EgressService = new EgressService(
    database,
    clock,
    events,
    sessions,
    vms,
    engine,
    egressEnforcer,
    {
      defaultPolicy: config.egress.egressDefault,
      retentionDays: config.egress.egressLogRetentionDays,
      refusedEventIntervalMs: config.egress.egressRefusedEventSeconds * 1000,
      reconcileIntervalMs: 2000,
      failures: core.backgroundFailures,
    },
    vaultGateway,
    { ownership, remote: config.server.databaseUrl ? remoteNodes : null },
  );
  // What makes a VM ready for its session, in one place: its egress rules before it runs, then the ready steps in
  // their declared order (core/vms/readiness.ts), and its rules again when a paused VM comes back.
  // Private networks' relay needs root too (nftables, loopback listeners the firewall redirects to).
  const networkRelay =
    process.getuid?.() === 0
      ? new NetworkRelay({
          table: privateNetworkTableName(`${engine.nodeId}:${config.server.dataDir}`),
          connect: (sourceVmId, address, port) => networks.connect(sourceVmId, address, port),
        })
      : null;
  const networks: NetworkService = new NetworkService(database, clock, events, vms, engine, networkRelay, {
    reconcileIntervalMs: 2000,
    failures: core.backgroundFailures,
  });
  vms.setReadiness({
    beforeRun: async (vm, kind, target) => {
      await egress.beforeRun(vm, kind, target);
      await networks.beforeRun(vm, kind, target);
    },
    startFailed: (vmId) => {
      egress.startFailed(vmId);
      networks.startFailed(vmId);
    },
    ready: {
      egress: (_session, live) => egress.readyForSession(live.vm),
      network: (_session, live) => networks.ready(live.vm, live.agent),
      vaultCa: trustVaultCa(vaultGateway, vaultCa),
      sessionEnv: applySessionEnv,
      desktopScreen: fitDesktopScreen,
    },
    resumed: async (vm) => {
      await egress.resumed(vm);
      await networks.ready(vm);
    },
  });
  const snapshots = new SnapshotService(database, clock, events, engine, sources, sessions, vms, limiter, config.vm.forkConcurrency);
  const fetcher = createGitFetcher({
    allowPrivate: config.templates.templateGitAllowPrivate,
    timeoutMs: config.templates.templateGitTimeoutSeconds * 1000,
    maxBytes: config.templates.templateGitMaxMb * 2 ** 20,
  });
  const templates = new TemplateService(database, clock, events, engine, sources, fetcher, {
    defaultVcpuCount: config.vm.defaultVcpus,
    defaultMemoryMb: config.vm.defaultMemoryMb,
    postBuildTimeoutMs: config.templates.templatePostBuildTimeoutSeconds * 1000,
    maxBuildsPerUser: config.templates.templateMaxBuildsPerUser,
  });
  const contexts = new PythonContextService(database, sessions, vms, clock);
  const executions = new ExecutionService(
    database,
    sessions,
    vms,
    limiter,
    clock,
    events,
    { outputLimitBytes: config.execution.executionOutputLimitBytes, maxRunSeconds: config.execution.executionMaxSeconds },
    contexts,
  );
  const appUrls = new AppUrls(config.server.publicUrl, config.domains.appDomain);
  const processes = new ProcessService(sessions, vms, clock);
  const apps = new AppService(
    {
      database,
      clock,
      notifier: events,
      sessions,
      vms,
      processes,
      snapshots,
      sources,
      egress,
      vaults: core.vaults,
      authenticator: core.authenticator,
      appUrls,
      failures: core.backgroundFailures,
      domainHosts: core.customDomainHosts,
    },
    {
      uploadMaxBytes: config.execution.appUploadMaxMb * 1024 * 1024,
      drainMs: 5000,
      defaults: { vcpus: config.vm.defaultVcpus, memoryMb: config.vm.defaultMemoryMb },
      vmLifetimeSeconds: 2_592_000,
    },
  );
  const shares = new ShareService(database, sessions, core.previewTokens, appUrls, clock, events, config.domains.shareLinkTtlSeconds, core.customDomainHosts);
  const previews = new PreviewAccess(database, sessions, vms, shares, core.previewTokens, core.authenticator, clock, core.viewerTokens);
  const objects = createObjectStore(config.objects);
  const resolver = createTxtResolver({ servers: config.domains.dnsServers, timeoutMs: config.domains.dnsTimeoutMs });
  const customDomains = new CustomDomainService(database, sessions, shares, core.previewTokens, appUrls, core.customDomainHosts, resolver, clock, events, {
    reserved: reservedNames(config),
    checkIntervalSeconds: config.domains.customDomainCheckIntervalSeconds,
    pendingSeconds: config.domains.customDomainPendingSeconds,
    maxPerUser: MAX_CUSTOM_DOMAINS_PER_USER,
    reverifySeconds: config.domains.customDomainReverifySeconds,
    reverifyMisses: config.domains.customDomainReverifyMisses,
  });
  const customDomainChecker = new CustomDomainChecker(database, clock, customDomains, {
    intervalMs: config.domains.customDomainCheckIntervalSeconds * 1000,
    lookupTimeoutMs: config.domains.dnsTimeoutMs,
    concurrency: 4,
  });
  const browserService = new BrowserService(
    database,
    clock,
    events,
    engine,
    new PlaywrightDriver(),
    limiter,
    objects,
    core.secretBox,
    dependencies.loadBrowserTemplate,
    {
      ownership,
      vcpuCount: config.browser.browserVcpus,
      memoryMb: config.browser.browserMemoryMb,
      poolSize: config.browser.browserPoolSize,
      idleTimeoutSeconds: config.browser.browserIdleTimeoutSeconds,
      maxSessionSeconds: config.browser.browserSessionMaxSeconds,
      screenshotRetentionDays: config.browser.screenshotRetentionDays,
      defaultViewport: { width: 1280, height: 720 },
      failures: core.backgroundFailures,
    },
  );
  const nodes = new NodeRegistry(
    database,
    clock,
    {
      nodeId: engine.nodeId,
      internalUrl: config.cluster.internalUrl,
      capacity: { vcpus: config.cluster.nodeVcpus, memoryMb: config.cluster.nodeMemoryMb, vmSlots: config.cluster.nodeVmSlots },
      version: API_VERSION,
      heartbeatMs: config.cluster.nodeHeartbeatSeconds * 1000,
      deadAfterMs: config.cluster.nodeDeadAfterSeconds * 1000,
      load: () => vms.nodeLoad(),
      templates: () => [...BUILTIN_SOURCE_NAMES],
      recordLostVms: () => vms.recordLostVms(),
      onSelfDeclaredDead: async () => void (await vms.killForsaken()),
      failures: core.backgroundFailures,
    },
    dependencies.log,
  );
  return {
    nodes,
    ownership,
    killQueue,
    storage: new ClusterStorageService(database, engine.storage, engine.nodeId, clock, core.backgroundFailures, {
      gcIntervalMs: config.objects.artifactGcIntervalSeconds * 1000,
    }),
    egress,
    vaultGateway,
    vaultCa,
    engine,
    limiter,
    sessions,
    vms,
    sources,
    snapshots,
    volumes: new VolumeService(database, clock, events, engine, limiter, ownership),
    networks,
    templates,
    executions,
    contexts,
    files: new FileService(database, sessions, vms, clock, events),
    processes,
    apps,
    appSupervisor: new AppSupervisor(apps, { database, clock, notifier: events, vms, processes, failures: core.backgroundFailures }),
    appUrls,
    shares,
    previews,
    terminals: new TerminalService(database, sessions, vms, clock),
    customDomains,
    customDomainChecker,
    browser: new ClusterBrowserRouter(browserService, database, remoteNodes, ownership),
    browserService,
    computerUse: new ComputerUseService(database, clock, events, sessions, vms, core.viewerTokens, objects, engine, sources, {
      viewerTokenTtlSeconds: config.desktop.viewerTokenTtlSeconds,
      maxRecordingBytes: config.desktop.maxRecordingMb * 2 ** 20,
      poolSize: config.desktop.desktopPoolSize,
      shape: { vcpuCount: config.desktop.desktopVcpus, memoryMb: config.desktop.desktopMemoryMb },
    }),
  };
}
