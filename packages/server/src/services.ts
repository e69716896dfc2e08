/**
 * Wires the core services over one store. Used by the HTTP app and by the offline admin commands, so
 * both act on the store the same way.
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { isIP, isIPv4 } from 'node:net';
import type { Config } from './config.ts';
import { ApiKeyService } from './core/api-keys.ts';
import { SshKeyService } from './core/ssh-keys.ts';
import { createAccessTokenIssuer, type AccessTokenIssuer } from './core/auth/access-tokens.ts';
import { ConsoleSessions } from './core/auth/console-sessions.ts';
import { SignInThrottle } from './core/auth/sign-in-throttle.ts';
import { createPreviewTokens, type PreviewTokens } from './core/auth/preview-tokens.ts';
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
import { forbiddenAddressReason } from './core/webhooks/address-policy.ts';
import { WebhookDispatcher } from './core/webhooks/dispatcher.ts';
import { SecretBox } from './core/webhooks/secret-box.ts';
import { WebhookService } from './core/webhooks/webhook-service.ts';
import { createHttpSender } from './webhooks/http-sender.ts';
import { ExecutionService } from './core/executions.ts';
import { FileService } from './core/files.ts';
import { PlanLimiter } from './core/limits.ts';
import { SessionService } from './core/sessions.ts';
import type { TemplateImage, VmEngine } from './core/vm-engine.ts';
import { VmService } from './core/vms.ts';
import { SnapshotService } from './core/snapshots.ts';
import { VolumeService } from './core/volumes.ts';
import { TemplateService } from './core/templates.ts';
import { createGitFetcher } from './git/bare-clone.ts';
import { BUILTIN_SOURCE_NAMES, VmSources } from './core/vm-sources.ts';
import { ComputerUseService } from './core/computer-use/computer-use-service.ts';
import { DESKTOP_TEMPLATE_ID } from './core/model.ts';
import { NodeRegistry } from './core/cluster/node-registry.ts';
import { InternalAuth } from './core/cluster/internal-auth.ts';
import { ClusterBrowserRouter } from './core/cluster/browser-router.ts';
import { RemoteNodes } from './core/cluster/remote-nodes.ts';
import { Placement } from './core/cluster/placement.ts';
import { KillQueue } from './core/cluster/kill-queue.ts';
import { API_VERSION } from './api/openapi.ts';
import type { FastifyBaseLogger } from 'fastify';
import { createViewerTokens, type ViewerTokens } from './core/computer-use/viewer-tokens.ts';
import type { BrowserApi } from './core/browser/browser-api.ts';
import { BrowserService } from './core/browser/browser-service.ts';
import { PlaywrightDriver } from './browser/playwright-driver.ts';
import { createObjectStore } from './storage/index.ts';
import { EgressService } from './core/egress.ts';
import { installGuestCa, VaultCa } from './core/vault/vault-ca.ts';
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
  if (config.authSecret) return config.authSecret;
  return readOrInitSetting(database.db, 'auth.token_secret', randomBytes(48).toString('base64url'));
}

/** Names no custom domain may take: the public URL's host, the listen address when it is a name, the app domain. */
function reservedNames(config: Config): ReservedNames {
  const apiHosts = [new AppUrls(config.publicUrl, config.appDomain).apiHostname, ...(isIP(config.host) === 0 ? [normalizeDomain(config.host)] : [])];
  return { apiHosts, appDomain: config.appDomain };
}

/** Services that need no VM engine (the admin command uses only these). */
export async function createServices(config: Config, database: Database, clock: Clock = systemClock): Promise<CoreServices> {
  const authSecret = await resolveAuthSecret(config, database);
  const tokens = createAccessTokenIssuer(authSecret, config.accessTokenTtlSeconds);
  const events = new EventNotifier();
  const users = new UserService(database, config.plans, config.defaultPlan, clock);
  const audit = new AuditLog(database, clock);
  const box = new SecretBox(authSecret);
  const sender = createHttpSender({ refuseAddress: config.webhookAllowPrivate ? () => null : forbiddenAddressReason });
  const webhookDispatcher = new WebhookDispatcher(database, clock, events, box, sender, {
    pollIntervalMs: config.eventPollIntervalMs,
    retryScheduleMs: config.webhookRetryScheduleMs,
    maxAttempts: config.webhookMaxAttempts,
    timeoutMs: config.webhookTimeoutMs,
    concurrency: config.webhookConcurrency,
  });
  const apiKeys = new ApiKeyService(database, clock, events);
  const consoleSessions = new ConsoleSessions(database, clock, authSecret, config.consoleSessionTtlSeconds ?? config.accessTokenTtlSeconds);
  const authenticator = new Authenticator(database, tokens, clock, consoleSessions);
  const signInThrottle = new SignInThrottle(database, clock, {
    windowSeconds: config.signInWindowSeconds,
    maxFailuresPerUsername: config.signInMaxFailuresPerUsername,
    maxFailuresPerSource: config.signInMaxFailuresPerAddress,
  });
  const vaultBox = await resolveVaultKey({ configuredKey: config.vaultKey, dataDir: config.dataDir, legacySecret: authSecret }, database);
  const clusterSecret = config.clusterSecret ?? (await readOrInitSetting(database.db, 'cluster.internal_secret', randomBytes(48).toString('base64url')));
  return {
    internalAuth: new InternalAuth(clusterSecret, config.nodeId),
    config,
    database,
    clock,
    events,
    users,
    apiKeys,
    sshKeys: new SshKeyService(database, clock, events),
    tokens,
    previewTokens: createPreviewTokens(authSecret),
    viewerTokens: createViewerTokens(authSecret),
    authenticator,
    consoleSessions,
    audit,
    signIn: new SignInService(users, tokens, audit, signInThrottle, authenticator),
    webhooks: new WebhookService(database, clock, events, box, webhookDispatcher, sender, {
      allowPrivate: config.webhookAllowPrivate,
      secretGraceSeconds: config.webhookSecretGraceSeconds,
      timeoutMs: config.webhookTimeoutMs,
    }),
    webhookDispatcher,
    eventFeed: new EventFeed(database, events, config.eventPollIntervalMs),
    cliAuth: new CliAuthService(database, clock, apiKeys, { ttlSeconds: config.cliAuthTtlSeconds, intervalSeconds: config.cliAuthIntervalSeconds }),
    customDomainHosts: new CustomDomainHosts(database, config.customDomainRefreshSeconds * 1000, reservedNames(config)),
    secretBox: box,
    vaults: new VaultService(database, clock, events, vaultBox, { logRetentionDays: config.vaultLogRetentionDays }),
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
  /** Templates built from OCI images: build jobs, their logs, deletion. */
  templates: TemplateService;
  executions: ExecutionService;
  files: FileService;
  /** Where VM ports are served (path and host name). */
  appUrls: AppUrls;
  shares: ShareService;
  /** Who may open a preview, and the tunnel to it. */
  previews: PreviewAccess;
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
  /** Kills of VMs on other nodes, through their pg-boss queues (cluster mode; null with the embedded store). Started by the HTTP app. */
  killQueue: KillQueue | null;
  /** Egress policies of VMs and sessions, their enforcement on this host and the egress log. Started by the HTTP app. */
  egress: EgressService;
  /** The vault's side of egress: TLS interception for bound hosts, placeholder swaps, the request log. */
  vaultGateway: VaultGateway;
  /** The deployment's CA that guests of vault sessions trust. */
  vaultCa: VaultCa;
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
  /** Where background work (heartbeats) reports. */
  log: FastifyBaseLogger;
}

export function createSandboxServices(core: CoreServices, engine: VmEngine, dependencies: SandboxDependencies): SandboxServices {
  const { config, database, clock, events } = core;
  const limiter = new PlanLimiter(config.plans, clock);
  const sessions = new SessionService(database, clock, events, {
    vmLifetimeSeconds: config.defaultVmLifetimeSeconds,
    memoryMb: config.defaultMemoryMb,
    vcpuCount: config.defaultVcpus,
  });
  const sources = new VmSources(database, () => engine.nodeId, {
    [DESKTOP_TEMPLATE_ID]: { load: dependencies.loadDesktopTemplate, shape: { vcpuCount: config.desktopVcpus, memoryMb: config.desktopMemoryMb } },
  });
  const placement = new Placement(database, clock, engine.nodeId, config.nodeDeadAfterSeconds * 1000);
  // Kills of other nodes' VMs go through their queues: only a cluster (a PostgreSQL store) has other nodes.
  const killQueue: KillQueue | null = config.databaseUrl
    ? new KillQueue(
        database,
        { connectionString: config.databaseUrl, nodeId: engine.nodeId, strictOwnership: config.strictKillOwnership, killLocal: (vmId): Promise<void> => vms.killHere(vmId) },
        dependencies.log,
      )
    : null;
  const remoteNodes = new RemoteNodes(database, core.internalAuth);
  const vms = new VmService(database, engine, limiter, clock, events, sources, remoteNodes, placement, killQueue);
  const vaultCa = new VaultCa(database, core.vaultBox, createCertificateAuthority);
  const vaultGateway = new VaultGateway(database, clock, events, core.vaultBox, config.vaultLogRetentionDays);
  let leafs: Promise<LeafCertificates> | null = null;
  const upstreamCa = config.vaultUpstreamCaFile ? [fs.readFileSync(config.vaultUpstreamCaFile, 'utf8')] : [];
  // Enforcing restricted egress policies needs root (nftables, listeners the firewall redirects to).
  const egressEnforcer =
    process.getuid?.() === 0
      ? new EgressEnforcer({
          table: egressTableName(`${engine.nodeId}:${config.dataDir}`),
          upstreams: async () => (config.egressDnsServers ?? (await hostDnsServers()).filter((address) => isIPv4(address))).map(parseUpstream),
          onAttempt: (attempt) => egress.record(attempt),
          vault: {
            plan: (vmId, scheme, name, address) => vaultGateway.plan(vmId, scheme, name, address),
            rewrite: (vmId, request) => vaultGateway.rewrite(vmId, request),
            leafs: () => (leafs ??= vaultCa.material().then((ca) => new LeafCertificates(ca))),
            upstreamCa,
          },
        })
      : null;
  const egress: EgressService = new EgressService(database, clock, events, sessions, vms, engine, egressEnforcer, {
    defaultPolicy: config.egressDefault,
    retentionDays: config.egressLogRetentionDays,
    refusedEventIntervalMs: config.egressRefusedEventSeconds * 1000,
    reconcileIntervalMs: 2000,
  }, vaultGateway, config.databaseUrl ? remoteNodes : null);
  // A vault session's VM trusts the deployment's CA before it is handed out.
  vms.onVmReady(async (session, live) => {
    if (await vaultGateway.sessionHasVault(session.id)) await installGuestCa(live.agent, (await vaultCa.material()).certPem);
  });
  const snapshots = new SnapshotService(database, clock, events, engine, sources, sessions, vms, limiter);
  const fetcher = createGitFetcher({ allowPrivate: config.templateGitAllowPrivate, timeoutMs: config.templateGitTimeoutSeconds * 1000, maxBytes: config.templateGitMaxMb * 2 ** 20 });
  const templates = new TemplateService(database, clock, events, engine, sources, fetcher, {
    defaultVcpuCount: config.defaultVcpus,
    defaultMemoryMb: config.defaultMemoryMb,
    postBuildTimeoutMs: config.templatePostBuildTimeoutSeconds * 1000,
    maxBuildsPerUser: config.templateMaxBuildsPerUser,
  });
  const executions = new ExecutionService(database, sessions, vms, limiter, clock, events, {
    outputLimitBytes: config.executionOutputLimitBytes,
    maxRunSeconds: config.executionMaxSeconds,
  });
  const appUrls = new AppUrls(config.publicUrl, config.appDomain);
  const shares = new ShareService(database, sessions, core.previewTokens, appUrls, clock, events, config.shareLinkTtlSeconds, core.customDomainHosts);
  const previews = new PreviewAccess(database, sessions, vms, shares, core.previewTokens, core.authenticator, clock, core.viewerTokens);
  const objects = createObjectStore(config);
  const resolver = createTxtResolver({ servers: config.dnsServers, timeoutMs: config.dnsTimeoutMs });
  const customDomains = new CustomDomainService(database, sessions, shares, core.previewTokens, appUrls, core.customDomainHosts, resolver, clock, events, {
    reserved: reservedNames(config),
    checkIntervalSeconds: config.customDomainCheckIntervalSeconds,
    pendingSeconds: config.customDomainPendingSeconds,
    maxPerUser: MAX_CUSTOM_DOMAINS_PER_USER,
    reverifySeconds: config.customDomainReverifySeconds,
    reverifyMisses: config.customDomainReverifyMisses,
  });
  const customDomainChecker = new CustomDomainChecker(database, clock, customDomains, {
    intervalMs: config.customDomainCheckIntervalSeconds * 1000,
    lookupTimeoutMs: config.dnsTimeoutMs,
    concurrency: 4,
  });
  const browserService = new BrowserService(database, clock, events, engine, new PlaywrightDriver(), limiter, objects, core.secretBox, dependencies.loadBrowserTemplate, {
    nodeId: engine.nodeId,
    vcpuCount: config.browserVcpus,
    memoryMb: config.browserMemoryMb,
    poolSize: config.browserPoolSize,
    idleTimeoutSeconds: config.browserIdleTimeoutSeconds,
    maxSessionSeconds: config.browserSessionMaxSeconds,
    screenshotRetentionDays: config.screenshotRetentionDays,
    defaultViewport: { width: 1280, height: 720 },
  });
  const nodes = new NodeRegistry(
    database,
    clock,
    {
      nodeId: engine.nodeId,
      internalUrl: config.internalUrl,
      capacity: { vcpus: config.nodeVcpus, memoryMb: config.nodeMemoryMb, vmSlots: config.nodeVmSlots },
      version: API_VERSION,
      heartbeatMs: config.nodeHeartbeatSeconds * 1000,
      deadAfterMs: config.nodeDeadAfterSeconds * 1000,
      load: () => vms.nodeLoad(),
      templates: () => [...BUILTIN_SOURCE_NAMES],
      recordLostVms: () => vms.recordLostVms(),
      onSelfDeclaredDead: async () => void (await vms.killForsaken()),
    },
    dependencies.log,
  );
  return {
    nodes,
    killQueue,
    egress,
    vaultGateway,
    vaultCa,
    engine,
    limiter,
    sessions,
    vms,
    sources,
    snapshots,
    volumes: new VolumeService(database, clock, events, engine, limiter),
    templates,
    executions,
    files: new FileService(database, sessions, vms, clock, events),
    appUrls,
    shares,
    previews,
    terminals: new TerminalService(database, sessions, vms, clock),
    customDomains,
    customDomainChecker,
    browser: new ClusterBrowserRouter(browserService, database, remoteNodes, engine.nodeId),
    browserService,
    computerUse: new ComputerUseService(database, clock, events, sessions, vms, core.viewerTokens, objects, engine, sources, {
      viewerTokenTtlSeconds: config.viewerTokenTtlSeconds,
      maxRecordingBytes: config.maxRecordingMb * 2 ** 20,
      poolSize: config.desktopPoolSize,
      shape: { vcpuCount: config.desktopVcpus, memoryMb: config.desktopMemoryMb },
    }),
  };
}
