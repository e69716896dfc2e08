/**
 * App deployments: a supervisor over sessions and routes. An app is a user's named service at its own host
 * (`<name>--<handle>.<app domain>`); each deployment is a version. A version is brought up as a background job on
 * the core services that exist: a session per replica (its vCPUs, memory, env, vaults and egress policy), its VM
 * started from the template (or the user's snapshot), the archive extracted in the VM by its agent, `install`
 * run once, a snapshot of the installed VM taken (`app-<id>-v<N>`: what restarts, replacement VMs and rollbacks
 * start from, so they never install again), `start` run as a kept process, and the port health-checked through
 * the agent's tunnel (the preview proxy's path). Then the switch: the app's live version, port and VMs change in
 * one store update, which the proxy reads on every request; the previous VMs are stopped after a drain. A version
 * that fails never touches the live one. Jobs of one app run one after another (a redeploy waits for the one
 * before). `AppSupervisor` (supervisor.ts) keeps live replicas running.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import type { Duplex } from 'node:stream';
import type { Principal, Authenticator, CredentialSource } from '../authenticator.ts';
import type { AppUrls } from '../app-urls.ts';
import type { BackgroundFailures } from '../background-timers.ts';
import type { Clock } from '../clock.ts';
import { deleteDomainsServing } from '../custom-domain-events.ts';
import type { CustomDomainHosts } from '../custom-domain-hosts.ts';
import { AppError, badRequest, notFound } from '../errors.ts';
import { recordEvent, type EventNotifier } from '../events.ts';
import type { EgressService } from '../egress.ts';
import type { EgressPolicy } from '../egress-policy.ts';
import type { OutputItem } from '../process-output.ts';
import type { ProcessService } from '../processes.ts';
import type { SessionService } from '../sessions.ts';
import type { SnapshotService } from '../snapshots.ts';
import type { VaultService } from '../vault/vault-service.ts';
import type { VmSources } from '../vm-sources.ts';
import type { VmService } from '../vms/index.ts';
import type { GuestAgent } from '../vm-engine.ts';
import type { CustomDomain, CustomDomainStatus, Session, VmSourceRef } from '../../model.ts';
import type { Database } from '../../store/database.ts';
import { isUniqueViolation } from '../../store/database.ts';
import {
  deleteAppRow,
  findApp,
  findAppByHostLabel,
  findDeployment,
  findOwnedApp,
  insertApp,
  insertDeployment,
  listApps,
  listDeployments,
  readDeploymentLog,
  updateApp,
  updateDeployment,
  type AppRecord,
  type DeploymentRecord,
} from '../../store/apps-store.ts';
import { listOpenCustomDomainsOfApps } from '../../store/custom-domains-store.ts';
import { findVault, findVaultByName } from '../../store/vaults-store.ts';
import { readArchiveManifest } from './archive.ts';
import { DeploymentLog } from './deployment-log.ts';
import { probeHealth } from './health-probe.ts';
import { checkAppName, parseManifest, type AppManifest, type ManifestDefaults } from './manifest.ts';

/** Where the archive is extracted in the VM, and the app's working directory. */
export const APP_DIR = '/app';
/** How long an install may run. */
const INSTALL_TIMEOUT_MS = 30 * 60_000;
/**
 * How long a start process may run: the agent's longest deadline (24 h). The supervisor restarts the live version
 * on new VMs, without downtime, before it is reached (supervisor.ts).
 */
export const PROCESS_TIMEOUT_SECONDS = 86_400;
/** How often a starting replica is asked for its health. */
const START_PROBE_INTERVAL_MS = 500;

export interface AppServiceOptions {
  /** Largest upload (SANDBOXD_APP_UPLOAD_MAX_MB); larger answers 413. */
  uploadMaxBytes: number;
  /** How long the previous version's VMs keep serving requests already sent to them after a switch. */
  drainMs: number;
  /** vCPUs and memory of an app whose manifest names none. */
  defaults: ManifestDefaults;
  /** The lifetime of app VMs (the supervisor replaces one that reaches it). */
  vmLifetimeSeconds: number;
}

export interface AppServiceDeps {
  database: Database;
  clock: Clock;
  notifier: EventNotifier;
  sessions: SessionService;
  vms: VmService;
  processes: ProcessService;
  snapshots: SnapshotService;
  sources: VmSources;
  egress: EgressService;
  vaults: VaultService;
  authenticator: Authenticator;
  appUrls: AppUrls;
  failures: BackgroundFailures;
  /** The node's set of verified custom domains: an app's domains leave it when the app is deleted. */
  domainHosts: CustomDomainHosts;
}

/** An app as the API shows it. */
export interface AppView {
  id: string;
  name: string;
  url: string;
  status: AppRecord['status'];
  live_version: number | null;
  latest_version: number;
  replicas: number;
  public: boolean;
  created_at: string;
  updated_at: string;
  /** The custom domains that serve the app (pending or verified; failed ones are left out). */
  custom_domains: AppCustomDomainView[];
}

/** A custom domain of an app, as the app's record shows it. */
export interface AppCustomDomainView {
  id: string;
  domain: string;
  url: string;
  status: CustomDomainStatus;
}

/** Which app a request to the preview proxy names: by its host label, or by its id (a custom domain's app). */
export type AppRef = { hostLabel: string } | { appId: string };

/** A deployment as the API shows it. */
export interface DeploymentView {
  app_id: string;
  version: number;
  status: DeploymentRecord['status'];
  manifest: Record<string, unknown>;
  vm_ids: string[];
  error: string | null;
  created_at: string;
  live_at: string | null;
  ended_at: string | null;
}

/** One serving VM of a live version, as the supervisor follows it. */
export interface Replica {
  /** 1-based. */
  index: number;
  sessionId: string;
  vmId: string;
  processId: string | null;
  /** Health checks failed in a row. */
  healthFailures: number;
  /** Restarts since it was last healthy for a minute (the back-off's exponent). */
  attempt: number;
  /** Not before this time (ms) is it restarted again. */
  nextRestartAt: number;
  /** Since when its checks pass (ms), or null while it is down. */
  healthySince: number | null;
  lastProbeAt: number;
  /** A restart or replacement is under way. */
  busy: boolean;
  /** It crashed and is not serving yet. */
  down: boolean;
}

/** A replica just started or adopted: no process yet, no failures, not yet healthy. */
export function freshReplica(index: number, sessionId: string, vmId: string): Replica {
  return {
    index,
    sessionId,
    vmId,
    processId: null,
    healthFailures: 0,
    attempt: 0,
    nextRestartAt: 0,
    healthySince: null,
    lastProbeAt: 0,
    busy: false,
    down: false,
  };
}

/** A live version on this node: what the supervisor looks after. */
export interface RunningVersion {
  appId: string;
  userId: number;
  version: number;
  manifest: AppManifest;
  snapshotId: string;
  replicas: Replica[];
  /** When its start processes were started (ms; the oldest when adopted). */
  startedAt: number;
  /** A restart before the processes' deadline is under way. */
  renewing: boolean;
}

type JobReason = 'deploy' | 'rollback' | 'restart';

/** What a job brings up: a new version from its archive, or a version from its snapshot. */
interface Job {
  app: AppRecord;
  deployment: DeploymentRecord;
  manifest: AppManifest;
  principal: Principal;
  reason: JobReason;
  /** The uploaded archive (a new version); removed when the job ends. */
  archive: string | null;
  log: DeploymentLog;
  signal: AbortSignal;
}

interface StartedVm {
  session: Session;
  vmId: string;
  agent: GuestAgent;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });

export class AppService {
  /** Live versions this node looks after, by app id (the supervisor's view). */
  readonly running = new Map<string, RunningVersion>();
  /** The logs of jobs under way, by `<app id>/<version>`. */
  private readonly logs = new Map<string, DeploymentLog>();
  /** Each app's jobs, one after another. */
  private readonly chains = new Map<string, Promise<void>>();
  /** Aborts an app's jobs when it is deleted. */
  private readonly aborts = new Map<string, AbortController>();
  /** Round-robin position per app. */
  private readonly turns = new Map<string, number>();

  constructor(
    private readonly deps: AppServiceDeps,
    private readonly options: AppServiceOptions,
  ) {}

  get nodeId(): string {
    return this.deps.vms.nodeId;
  }

  // ---- The API's operations ----

  /**
   * A new version from an uploaded gzipped tar (the folder, manifest at its root): checked on the host without
   * extracting it, then brought up in the background. A new name creates the app.
   */
  async deploy(principal: Principal, body: Readable, nameParam: string | undefined): Promise<{ app: AppView; deployment: DeploymentView }> {
    const archive = await this.receive(body);
    try {
      const { fileName, text } = await readArchiveManifest(archive);
      const manifest = parseManifest(fileName, text, this.options.defaults);
      const name = manifest.name ? checkAppName(manifest.name, `${fileName}: field name`) : nameParam ? checkAppName(nameParam, 'the name parameter') : null;
      if (!name) throw badRequest(`name the app: add the field name to ${fileName}, or pass ?name=`);
      manifest.name = name;
      await this.checkReferences(principal, manifest);
      const { app, deployment, created } = await this.record(principal, name, manifest);
      this.enqueue(app, deployment, manifest, principal, 'deploy', archive, created);
      return { app: await this.viewOf(app), deployment: this.deploymentView(deployment) };
    } catch (error) {
      fs.rmSync(path.dirname(archive), { recursive: true, force: true });
      throw error;
    }
  }

  async list(principal: Principal): Promise<AppView[]> {
    const apps = await listApps(this.deps.database.db, principal.userId);
    const domains = await listOpenCustomDomainsOfApps(
      this.deps.database.db,
      apps.map((app) => app.id),
    );
    return apps.map((app) => this.appView(app, domains));
  }

  async get(principal: Principal, key: string): Promise<AppView> {
    return this.viewOf(await this.owned(principal, key));
  }

  async deployments(principal: Principal, key: string): Promise<DeploymentView[]> {
    const app = await this.owned(principal, key);
    return (await listDeployments(this.deps.database.db, app.id)).map((d) => this.deploymentView(d));
  }

  async deployment(principal: Principal, key: string, version: number): Promise<DeploymentView> {
    const app = await this.owned(principal, key);
    return this.deploymentView(await this.ownedDeployment(app, version));
  }

  /** A deployment's log: the job's lines as they come (`follow`), or the stored text of an ended job. */
  async deploymentLog(principal: Principal, key: string, version: number, follow: boolean, signal: AbortSignal): Promise<AsyncGenerator<string>> {
    const app = await this.owned(principal, key);
    await this.ownedDeployment(app, version);
    const live = this.logs.get(`${app.id}/${version}`);
    if (live) return live.read(follow, signal);
    const text = (await readDeploymentLog(this.deps.database.db, app.id, version)) ?? '';
    return (async function* () {
      if (text) yield text;
    })();
  }

  /** The running app's output: its start command's stdout and stderr, `[rN] `-prefixed when it has several replicas. */
  async appLog(principal: Principal, key: string, follow: boolean, signal: AbortSignal): Promise<AsyncGenerator<string>> {
    const app = await this.owned(principal, key);
    const running = this.running.get(app.id);
    const replicas = running?.replicas.filter((r) => r.processId !== null) ?? [];
    const sources = await Promise.all(
      replicas.map(async (replica) => {
        const { output } = await this.deps.processes.attach(principal, replica.sessionId, replica.processId!);
        return { prefix: replicas.length > 1 ? `[r${replica.index}] ` : '', items: output.read(0, { follow, signal }) };
      }),
    );
    return mergeOutputs(sources);
  }

  /** Brings an earlier version back (default: the last one live before the current one), without downtime. */
  async rollback(principal: Principal, key: string, version: number | undefined): Promise<{ app: AppView; deployment: DeploymentView }> {
    const app = await this.owned(principal, key);
    const all = await listDeployments(this.deps.database.db, app.id);
    let target: DeploymentRecord | undefined;
    if (version !== undefined) {
      target = all.find((d) => d.version === version);
      if (!target) throw notFound(`version ${version} of app ${app.name}`);
      if (version === app.liveVersion) throw new AppError('CONFLICT', `version ${version} is the live version of ${app.name}: restart it instead`);
    } else {
      target = all
        .filter((d) => d.liveAt !== null && d.version !== app.liveVersion && d.snapshotId !== null)
        .sort((a, b) => (b.liveAt ?? '').localeCompare(a.liveAt ?? ''))[0];
      if (!target) throw new AppError('CONFLICT', `app ${app.name} has no earlier version that was live: name a version`);
    }
    if (target.snapshotId === null || target.liveAt === null)
      throw new AppError('CONFLICT', `version ${target.version} of ${app.name} never went live (${target.status}): only a version that was live can come back`);
    return this.again(principal, app, target, 'rollback');
  }

  /** Brings the live version up again on new VMs from its snapshot, switching without downtime. */
  async restart(principal: Principal, key: string): Promise<{ app: AppView; deployment: DeploymentView }> {
    const app = await this.owned(principal, key);
    if (app.liveVersion === null) throw new AppError('CONFLICT', `app ${app.name} has no live version to restart`);
    const deployment = await this.ownedDeployment(app, app.liveVersion);
    return this.again(principal, app, deployment, 'restart');
  }

  /** Deletes the app: its URL stops at once; its jobs are stopped, then its VMs and snapshots are removed. */
  async delete(principal: Principal, key: string): Promise<void> {
    const app = await this.owned(principal, key);
    const deployments = await listDeployments(this.deps.database.db, app.id);
    const deleted = await this.deps.database.db.transaction().execute(async (trx) => {
      // Custom domains that serve the app go with it (never left routing to something else).
      const domains = await deleteDomainsServing(trx, this.deps.clock, { appId: app.id });
      // Deleted meanwhile (another request): the throw rolls the domains' deletion back with it.
      if (!(await deleteAppRow(trx, app.id))) throw notFound(`app ${key}`);
      await recordEvent(trx, this.deps.clock, { type: 'app.deleted', userId: app.userId, subjectId: app.id, data: { app_id: app.id, name: app.name } });
      return domains;
    });
    for (const domain of deleted) if (domain.status === 'verified') this.deps.domainHosts.remove(domain.domain);
    this.deps.notifier.committed();
    this.aborts.get(app.id)?.abort();
    const running = this.running.get(app.id);
    this.running.delete(app.id);
    const vmIds = new Set([...deployments.flatMap((d) => d.vmIds), ...(running?.replicas.map((r) => r.vmId) ?? [])]);
    const chain = this.chains.get(app.id) ?? Promise.resolve();
    // The jobs end at their next step; then nothing of the app is left.
    void chain
      .then(async () => {
        await this.killVms(principal, [...vmIds]);
        for (const d of deployments) if (d.snapshotId) await this.deleteSnapshot(principal, d.snapshotId);
      })
      .catch((error: unknown) => this.deps.failures.report('app_cleanup', error));
  }

  /**
   * The supervisor's restart of a live version whose start processes near the agent's deadline: new VMs from its
   * snapshot, switched without downtime, like `POST /v1/apps/{app}/restart`.
   */
  async renew(running: RunningVersion): Promise<void> {
    const app = await findApp(this.deps.database.db, running.appId);
    if (!app || app.liveVersion !== running.version) return;
    const deployment = await findDeployment(this.deps.database.db, app.id, running.version);
    if (!deployment) return;
    running.renewing = true;
    await this.again(await this.principalOf(running), app, deployment, 'restart');
  }

  // ---- The preview proxy's side ----

  /**
   * A connection to a live replica of the app named by its host label (or, for a custom domain, its id): round
   * robin over its live VMs, read from the store on every request, so a switch takes effect at the next request.
   * A private app (`public: false`) opens for its owner's credentials only. Nothing of the owner's authority
   * reaches the app.
   */
  async connect(ref: AppRef, credential: { value: string; source: CredentialSource } | null): Promise<Duplex> {
    const db = this.deps.database.db;
    const app = 'hostLabel' in ref ? await findAppByHostLabel(db, ref.hostLabel) : await findApp(db, ref.appId);
    const shown = 'hostLabel' in ref ? ref.hostLabel : ref.appId;
    if (!app) throw notFound(`app ${shown}`);
    if (!app.isPublic) {
      if (!credential) throw new AppError('NOT_AUTHENTICATED', `app ${app.name} is private: send its owner's API key or token`);
      const principal = await this.deps.authenticator.authenticate(credential.value, credential.source);
      if (principal.userId !== app.userId) throw notFound(`app ${shown}`);
    }
    if (app.liveVersion === null || app.livePort === null || app.liveVmIds.length === 0)
      throw new AppError('VM_UNAVAILABLE', `app ${app.name} has no live version yet: follow its deployment's log`);
    const count = app.liveVmIds.length;
    const first = this.turns.get(app.id) ?? 0;
    this.turns.set(app.id, (first + 1) % count);
    let lastError: unknown = null;
    for (let k = 0; k < count; k++) {
      const vm = await this.deps.vms.find(app.liveVmIds[(first + k) % count]!);
      const agent = vm && vm.status === 'active' ? this.deps.vms.agentOf(vm) : null;
      if (!agent) continue;
      try {
        return await agent.openTunnel(app.livePort);
      } catch (error) {
        lastError = error;
      }
    }
    if (lastError) throw lastError;
    throw new AppError('VM_GONE', `no VM of app ${app.name} is running now: the supervisor is replacing it`);
  }

  // ---- Jobs ----

  private async again(
    principal: Principal,
    app: AppRecord,
    deployment: DeploymentRecord,
    reason: JobReason,
  ): Promise<{ app: AppView; deployment: DeploymentView }> {
    const manifest = deployment.manifest as AppManifest;
    await this.deps.database.db.transaction().execute(async (trx) => {
      await updateDeployment(trx, app.id, deployment.version, { status: 'pending', error: null });
      await recordEvent(trx, this.deps.clock, {
        type: 'app.deploying',
        userId: app.userId,
        subjectId: app.id,
        data: { app_id: app.id, name: app.name, version: deployment.version, reason },
      });
    });
    this.deps.notifier.committed();
    const pending = { ...deployment, status: 'pending' as const, error: null };
    const earlier = (await readDeploymentLog(this.deps.database.db, app.id, deployment.version)) ?? '';
    this.enqueue(app, pending, manifest, principal, reason, null, false, earlier);
    return { app: await this.viewOf(app), deployment: this.deploymentView(pending) };
  }

  /** Runs the job after the app's previous ones; its log is readable at once. */
  private enqueue(
    app: AppRecord,
    deployment: DeploymentRecord,
    manifest: AppManifest,
    principal: Principal,
    reason: JobReason,
    archive: string | null,
    created: boolean,
    earlierLog = '',
  ): void {
    const log = new DeploymentLog(earlierLog, () => this.deps.clock.now());
    this.logs.set(`${app.id}/${deployment.version}`, log);
    log.line(
      `${reason === 'deploy' ? `deploying version ${deployment.version}` : `${reason}: bringing version ${deployment.version} up from its snapshot`} of ${app.name}${created ? ' (new app)' : ''}`,
    );
    let controller = this.aborts.get(app.id);
    if (!controller || controller.signal.aborted) {
      controller = new AbortController();
      this.aborts.set(app.id, controller);
    }
    const job: Job = { app, deployment, manifest, principal, reason, archive, log, signal: controller.signal };
    const previous = this.chains.get(app.id) ?? Promise.resolve();
    const next = previous
      .then(() => this.runJob(job))
      .finally(() => {
        if (archive) fs.rmSync(path.dirname(archive), { recursive: true, force: true });
      })
      .catch((error: unknown) => this.deps.failures.report('app_deployment', error));
    this.chains.set(app.id, next);
  }

  private async runJob(job: Job): Promise<void> {
    const { app, deployment, log } = job;
    const created: string[] = [];
    let snapshotTaken: string | null = null;
    try {
      const replicas = await this.bringUp(job, created, (id) => (snapshotTaken = id));
      this.check(job);
      await this.switchTo(job, replicas);
    } catch (error) {
      const message = error instanceof AppError || error instanceof Error ? error.message : String(error);
      const aborted = job.signal.aborted;
      log.line(aborted ? 'stopped: the app was deleted' : `failed: ${message}`);
      await this.endJob(job, aborted ? 'stopped' : 'failed', message);
      await this.killVms(job.principal, created);
      if (snapshotTaken) await this.deleteSnapshot(job.principal, snapshotTaken);
      return;
    } finally {
      this.logs.delete(`${app.id}/${deployment.version}`);
    }
  }

  /** Throws when the app was deleted (the job stops at its next step). */
  private check(job: Job): void {
    if (job.signal.aborted) throw new AppError('CONFLICT', `app ${job.app.name} was deleted`);
  }

  /** Builds (a new version) or restores (an earlier one), starts and health-checks every replica. */
  private async bringUp(job: Job, created: string[], tookSnapshot: (id: string) => void): Promise<Replica[]> {
    const { app, deployment, manifest, principal, log } = job;
    const db = this.deps.database.db;
    const replicas: Replica[] = [];
    let snapshotId = deployment.snapshotId;
    const newReplica = (index: number, started: StartedVm): Replica => freshReplica(index, started.session.id, started.vmId);
    if (job.archive) {
      await updateDeployment(db, app.id, deployment.version, { status: 'building' });
      const source = await this.sourceOf(principal, manifest);
      log.line(
        `starting a VM from ${manifest.kind === 'snapshot' ? `snapshot ${manifest.snapshot}` : `template ${manifest.template}`} (${manifest.vcpus} vCPU, ${manifest.memory_mb} MiB)`,
      );
      const build = await this.startVm(principal, app, deployment.version, manifest, source, job.signal);
      created.push(build.vmId);
      await updateDeployment(db, app.id, deployment.version, { sessionIds: [build.session.id], vmIds: [build.vmId] });
      this.check(job);
      log.line(`VM ${build.vmId} is running; extracting the archive into ${APP_DIR}`);
      await build.agent.mkdir(APP_DIR, { parents: true });
      const extracted = await build.agent.extractTar(APP_DIR, fs.createReadStream(job.archive), { gzip: true });
      log.line(`extracted: ${JSON.stringify(extracted)}`);
      this.check(job);
      if (manifest.install) {
        log.line(`install: ${manifest.install}`);
        const result = await build.agent.exec(
          { command: manifest.install, shell: ['/bin/bash', '-c'], cwd: APP_DIR, env: build.session.env, timeoutMs: INSTALL_TIMEOUT_MS },
          { onStdout: (chunk) => log.output('install| ', chunk.toString('utf8')), onStderr: (chunk) => log.output('install| ', chunk.toString('utf8')) },
        );
        if (result.timedOut) throw new AppError('BAD_REQUEST', `install did not finish within ${INSTALL_TIMEOUT_MS / 60_000} minutes`);
        if (result.exitCode !== 0)
          throw new AppError('BAD_REQUEST', `install exited with ${result.exitCode ?? result.signal} (its output is in this deployment's log)`);
        log.line(`install finished in ${Math.round(result.durationMs)} ms`);
      }
      this.check(job);
      const name = snapshotNameOf(app.id, deployment.version);
      log.line(`taking snapshot ${name} of the installed VM (restarts, new replicas and rollbacks start from it)`);
      const snapshot = await this.deps.vms.snapshot(principal, build.vmId, {
        name,
        metadata: { sandboxd_app: app.id, sandboxd_app_version: String(deployment.version) },
      });
      snapshotId = snapshot.id;
      tookSnapshot(snapshot.id);
      await updateDeployment(db, app.id, deployment.version, { snapshotId: snapshot.id });
      replicas.push(newReplica(1, build));
    }
    if (!snapshotId) throw new AppError('CONFLICT', `version ${deployment.version} has no snapshot to start from`);
    await updateDeployment(db, app.id, deployment.version, { status: 'starting' });
    for (let index = replicas.length + 1; index <= manifest.replicas; index++) {
      this.check(job);
      log.line(`starting replica ${index} from snapshot ${snapshotNameOf(app.id, deployment.version)}`);
      const started = await this.startVm(principal, app, deployment.version, manifest, { kind: 'snapshot', id: snapshotId }, job.signal);
      created.push(started.vmId);
      replicas.push(newReplica(index, started));
    }
    await updateDeployment(db, app.id, deployment.version, { sessionIds: replicas.map((r) => r.sessionId), vmIds: replicas.map((r) => r.vmId) });
    for (const replica of replicas) {
      this.check(job);
      replica.processId = await this.startProcess(principal, replica, manifest, job.app.id, deployment.version);
      log.line(`replica ${replica.index}: started \`${manifest.start}\` in ${APP_DIR} (VM ${replica.vmId})`);
    }
    await updateDeployment(db, app.id, deployment.version, { status: 'checking' });
    log.line(`health check: GET ${manifest.health_check.path} on port ${manifest.port}, up to ${manifest.health_check.start_timeout_seconds} s`);
    await Promise.all(replicas.map((replica) => this.waitHealthy(job, replica)));
    for (const replica of replicas) replica.healthySince = Date.now();
    return replicas.map((r) => ({ ...r, lastProbeAt: Date.now() }));
  }

  /** Waits until the replica answers its health check; fails when its process ends or the start timeout passes. */
  async waitHealthy(job: Pick<Job, 'manifest' | 'principal' | 'log' | 'signal'>, replica: Replica): Promise<void> {
    const { manifest, log } = job;
    const deadline = Date.now() + manifest.health_check.start_timeout_seconds * 1000;
    let last = '';
    for (let round = 0; ; round++) {
      if (job.signal.aborted) throw new AppError('CONFLICT', 'the app was deleted');
      const view = replica.processId ? await this.deps.processes.get(job.principal, replica.sessionId, replica.processId) : null;
      if (view && view.status !== 'running') {
        const tail = await this.outputTail(job.principal, replica);
        throw new AppError(
          'BAD_REQUEST',
          `the start command of replica ${replica.index} exited (${view.exit_code ?? view.signal ?? view.error}) before it was healthy${tail ? `: ${tail}` : ''}`,
        );
      }
      const result = await probeHealth(
        () => this.tunnel(replica.vmId, manifest.port),
        manifest.health_check.path,
        manifest.health_check.timeout_seconds * 1000,
      );
      if (result.healthy) {
        log.line(`replica ${replica.index}: healthy (${result.detail})`);
        return;
      }
      if (result.detail !== last || round % 20 === 0) log.line(`replica ${replica.index}: not healthy yet (${result.detail})`);
      last = result.detail;
      if (Date.now() > deadline)
        throw new AppError(
          'BAD_REQUEST',
          `replica ${replica.index} was not healthy within start_timeout_seconds (${manifest.health_check.start_timeout_seconds} s): ${result.detail}`,
        );
      await sleep(START_PROBE_INTERVAL_MS, job.signal);
    }
  }

  /** The switch: the app's live version, port and VMs in one update; then the previous VMs stop after the drain. */
  private async switchTo(job: Job, replicas: Replica[]): Promise<void> {
    const { app, deployment, manifest, log, reason } = job;
    const db = this.deps.database.db;
    const vmIds = replicas.map((r) => r.vmId);
    const now = this.deps.clock.now().toISOString();
    const before = this.running.get(app.id);
    const outcome = await db.transaction().execute(async (trx) => {
      const current = await findApp(trx, app.id);
      if (!current) return null;
      const previousVersion = current.liveVersion;
      const previous = previousVersion !== null ? await findDeployment(trx, app.id, previousVersion) : undefined;
      await updateApp(
        trx,
        app.id,
        { status: 'live', liveVersion: deployment.version, livePort: manifest.port, liveVmIds: vmIds, replicas: manifest.replicas, isPublic: manifest.public },
        now,
      );
      if (previous && previous.version !== deployment.version) await updateDeployment(trx, app.id, previous.version, { status: 'superseded', endedAt: now });
      await updateDeployment(trx, app.id, deployment.version, {
        status: 'live',
        liveAt: now,
        endedAt: null,
        error: null,
        vmIds,
        sessionIds: replicas.map((r) => r.sessionId),
      });
      await recordEvent(trx, this.deps.clock, {
        type: 'app.deployed',
        userId: app.userId,
        subjectId: app.id,
        data: { app_id: app.id, name: app.name, version: deployment.version, previous_version: previousVersion, vm_ids: vmIds },
      });
      if (reason === 'rollback') {
        await recordEvent(trx, this.deps.clock, {
          type: 'app.rolled_back',
          userId: app.userId,
          subjectId: app.id,
          data: { app_id: app.id, name: app.name, version: deployment.version, from_version: previousVersion },
        });
      }
      return { previousVmIds: current.liveVmIds };
    });
    if (!outcome) throw new AppError('CONFLICT', `app ${app.name} was deleted`);
    this.deps.notifier.committed();
    this.running.set(app.id, {
      appId: app.id,
      userId: app.userId,
      version: deployment.version,
      manifest,
      snapshotId: (await this.snapshotOf(app.id, deployment.version))!,
      replicas,
      startedAt: Date.now(),
      renewing: false,
    });
    const old = [...new Set([...(before?.replicas.map((r) => r.vmId) ?? []), ...outcome.previousVmIds])].filter((id) => !vmIds.includes(id));
    log.line(
      `live: ${this.deps.appUrls.appUrl(app.hostLabel)} now serves version ${deployment.version}${old.length ? `; the previous VMs (${old.join(', ')}) stop after a ${this.options.drainMs / 1000} s drain` : ''}`,
    );
    await this.endJob(job, 'live', null);
    if (old.length > 0) {
      await sleep(this.options.drainMs);
      await this.killVms(job.principal, old);
    }
  }

  private async snapshotOf(appId: string, version: number): Promise<string | null> {
    return (await findDeployment(this.deps.database.db, appId, version))?.snapshotId ?? null;
  }

  /** Records the job's end: the log goes to the row; a failure is an event (the live version is untouched). */
  private async endJob(job: Job, status: 'live' | 'failed' | 'stopped', error: string | null): Promise<void> {
    const { app, deployment, log } = job;
    log.end();
    const now = this.deps.clock.now().toISOString();
    const db = this.deps.database.db;
    await db.transaction().execute(async (trx) => {
      const current = await findApp(trx, app.id);
      if (!current) return;
      if (status === 'live') {
        await updateDeployment(trx, app.id, deployment.version, { log: log.text() });
        return;
      }
      // A rollback or restart that failed leaves the version as it was (superseded, or live with its old VMs).
      const keep = job.reason !== 'deploy';
      const restored = keep ? (current.liveVersion === deployment.version ? 'live' : 'superseded') : status;
      await updateDeployment(trx, app.id, deployment.version, { status: restored, error, log: log.text(), ...(keep ? {} : { endedAt: now }) });
      if (job.reason === 'deploy' && current.liveVersion === null) await updateApp(trx, app.id, { status: 'failed' }, now);
      if (status === 'failed') {
        await recordEvent(trx, this.deps.clock, {
          type: 'app.deployment_failed',
          userId: app.userId,
          subjectId: app.id,
          data: { app_id: app.id, name: app.name, version: deployment.version, error: error ?? 'failed' },
        });
      }
    });
    this.deps.notifier.committed();
  }

  // ---- Pieces the supervisor shares ----

  /** A new session and its VM for a replica of `version`, with the manifest's env, vaults and egress policy. */
  async startVm(principal: Principal, app: AppRecord, version: number, manifest: AppManifest, source: VmSourceRef, signal?: AbortSignal): Promise<StartedVm> {
    if (signal?.aborted) throw new AppError('CONFLICT', `app ${app.name} was deleted`);
    const resolved = await this.deps.sources.resolve(principal.userId, source);
    const vaultIds = await this.vaultIdsOf(principal.userId, manifest.secrets);
    const vaults = await this.deps.vaults.prepareAttachment(principal.userId, vaultIds, manifest.env);
    const session = await this.deps.sessions.create(principal, {
      source,
      ...(resolved.shape ?? { vcpuCount: manifest.vcpus, memoryMb: manifest.memory_mb }),
      vmLifetimeSeconds: this.options.vmLifetimeSeconds,
      env: { ...manifest.env, ...vaults.env },
      metadata: { sandboxd_app: app.id, sandboxd_app_name: app.name, sandboxd_app_version: String(version) },
    });
    await this.deps.vaults.recordAttachment(this.deps.database.db, session.id, vaults);
    const policy = this.egressPolicyOf(manifest);
    if (policy) await this.deps.egress.setInitialSessionPolicy(session, policy);
    const live = await this.deps.vms.ensureVm(principal, session);
    return { session, vmId: live.vm.id, agent: live.agent };
  }

  /** Starts the manifest's `start` as a kept process of the replica's session; answers its id. */
  async startProcess(principal: Principal, replica: Replica, manifest: AppManifest, appId: string, version: number): Promise<string> {
    const view = await this.deps.processes.start(principal, replica.sessionId, {
      command: manifest.start,
      cwd: APP_DIR,
      tag: `app ${appId} v${version} r${replica.index}`,
      timeoutSeconds: PROCESS_TIMEOUT_SECONDS,
    });
    return view.process_id;
  }

  /** The last lines of a replica's output (for the message of a start that failed). */
  async outputTail(principal: Principal, replica: Replica): Promise<string> {
    if (!replica.processId) return '';
    try {
      const { output } = await this.deps.processes.attach(principal, replica.sessionId, replica.processId);
      const text = Buffer.concat(output.since(0).map((event) => event.data)).toString('utf8');
      return text.trim().split('\n').slice(-5).join(' | ').slice(-1000);
    } catch {
      return '';
    }
  }

  /** A connection to the port of a replica's VM through its agent (the preview proxy's path). */
  async tunnel(vmId: string, port: number, knownAgent: GuestAgent | null = null): Promise<Duplex> {
    if (knownAgent) return knownAgent.openTunnel(port);
    const vm = await this.deps.vms.find(vmId);
    const agent = vm && vm.status === 'active' ? this.deps.vms.agentOf(vm) : null;
    if (!agent) throw new AppError('VM_GONE', `VM ${vmId} is not running`);
    return agent.openTunnel(port);
  }

  /** The owner of an app as a principal (the supervisor acts for them, within their plan's quota). */
  async principalOf(running: RunningVersion): Promise<Principal> {
    const session = await this.deps.sessions.find(running.replicas[0]!.sessionId);
    if (!session) throw notFound(`session of app ${running.appId}`);
    return this.deps.authenticator.principalOfSessionOwner(session);
  }

  async killVms(principal: Principal, vmIds: string[]): Promise<void> {
    for (const id of vmIds) {
      const vm = await this.deps.vms.find(id);
      if (!vm || !['active', 'starting', 'paused'].includes(vm.status)) continue;
      await this.deps.vms.kill(principal, vm).catch((error: unknown) => this.deps.failures.report('app_cleanup', error));
    }
  }

  // ---- Helpers ----

  private async deleteSnapshot(principal: Principal, snapshotId: string): Promise<void> {
    await this.deps.snapshots.delete(principal, snapshotId).catch((error: unknown) => {
      if (!(error instanceof AppError && error.code === 'NOT_FOUND')) this.deps.failures.report('app_cleanup', error);
    });
  }

  /**
   * Writes the request's body to a temporary file; 413 past the limit. The rest of a body that is too large is read
   * and dropped (up to four times the limit), so the client receives the 413 rather than a reset connection.
   */
  private async receive(body: Readable): Promise<string> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-app-'));
    const file = path.join(dir, 'upload.tar.gz');
    const limit = this.options.uploadMaxBytes;
    let size = 0;
    const out = fs.createWriteStream(file, { mode: 0o600 });
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > limit * 4) break;
        if (size > limit) continue;
        if (!out.write(chunk)) await once(out, 'drain');
      }
      out.end();
      await finished(out);
    } catch (error) {
      out.destroy();
      fs.rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    if (size > limit) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw new AppError('PAYLOAD_TOO_LARGE', `the archive is larger than ${Math.round(limit / (1024 * 1024))} MiB (SANDBOXD_APP_UPLOAD_MAX_MB)`);
    }
    if (size === 0) {
      fs.rmSync(dir, { recursive: true, force: true });
      throw badRequest("the body is empty: send the app's folder as a gzipped tar (Content-Type: application/gzip)");
    }
    // The job removes the directory when it ends.
    return file;
  }

  /** 404 now, not in the job, for a template, snapshot or vault that is not the caller's. */
  private async checkReferences(principal: Principal, manifest: AppManifest): Promise<void> {
    await this.sourceOf(principal, manifest);
    await this.vaultIdsOf(principal.userId, manifest.secrets);
    if (manifest.secrets.length > 0) this.deps.egress.requireEnforcement('secrets');
    this.egressPolicyOf(manifest);
  }

  private async sourceOf(principal: Principal, manifest: AppManifest): Promise<VmSourceRef> {
    if (manifest.kind === 'snapshot') {
      const ref = await this.deps.sources.byName(principal.userId, manifest.snapshot!);
      if (ref.kind !== 'snapshot') throw notFound(`snapshot "${manifest.snapshot}"`);
      return ref;
    }
    const ref = await this.deps.sources.byName(principal.userId, manifest.template);
    if (ref.kind !== 'template') throw notFound(`template "${manifest.template}"`);
    return ref;
  }

  private async vaultIdsOf(userId: number, names: string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const name of names) {
      const vault = (await findVaultByName(this.deps.database.db, userId, name)) ?? (await findVault(this.deps.database.db, userId, name));
      if (!vault) throw notFound(`vault "${name}"`);
      ids.push(vault.id);
    }
    return ids;
  }

  private egressPolicyOf(manifest: AppManifest): EgressPolicy | null {
    if (!manifest.egress) return null;
    return this.deps.egress.normalize({
      allowPackageManagers: false,
      allowHttp: true,
      allowHttps: true,
      allowedDomains: manifest.egress.allow,
      allowedCidrs: [],
      allowedPorts: [],
    });
  }

  /** Creates the app (new name) or its next version, with their events, in one transaction. */
  private async record(principal: Principal, name: string, manifest: AppManifest): Promise<{ app: AppRecord; deployment: DeploymentRecord; created: boolean }> {
    const now = this.deps.clock.now().toISOString();
    const db = this.deps.database.db;
    try {
      const result = await db.transaction().execute(async (trx) => {
        let app = await findOwnedApp(trx, principal.userId, name);
        const created = !app || app.name !== name;
        if (created) {
          const id = `app-${randomBase32(12)}`;
          app = {
            id,
            userId: principal.userId,
            name,
            hostLabel: `${name}--${handleOf(principal)}`,
            status: 'deploying',
            liveVersion: null,
            latestVersion: 1,
            replicas: manifest.replicas,
            isPublic: manifest.public,
            livePort: null,
            liveVmIds: [],
            nodeId: this.nodeId,
            createdAt: now,
            updatedAt: now,
          };
          await insertApp(trx, app);
          await recordEvent(trx, this.deps.clock, {
            type: 'app.created',
            userId: principal.userId,
            subjectId: id,
            data: { app_id: id, name, url: this.deps.appUrls.appUrl(app.hostLabel) },
          });
        } else {
          app = { ...app!, latestVersion: app!.latestVersion + 1, updatedAt: now, ...(app!.liveVersion === null ? { status: 'deploying' as const } : {}) };
          await updateApp(trx, app.id, { latestVersion: app.latestVersion, ...(app.liveVersion === null ? { status: 'deploying' } : {}) }, now);
        }
        const deployment: DeploymentRecord = {
          appId: app.id,
          version: app.latestVersion,
          status: 'pending',
          manifest: manifest as unknown as Record<string, unknown>,
          sessionIds: [],
          vmIds: [],
          snapshotId: null,
          error: null,
          createdAt: now,
          liveAt: null,
          endedAt: null,
        };
        await insertDeployment(trx, deployment);
        await recordEvent(trx, this.deps.clock, {
          type: 'app.deploying',
          userId: principal.userId,
          subjectId: app.id,
          data: { app_id: app.id, name, version: deployment.version, reason: 'deploy' },
        });
        return { app, deployment, created };
      });
      this.deps.notifier.committed();
      return result;
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('CONFLICT', `app ${name} is being created by another request, or its host name is taken: retry`);
      throw error;
    }
  }

  private async owned(principal: Principal, key: string): Promise<AppRecord> {
    const app = await findOwnedApp(this.deps.database.db, principal.userId, key);
    if (!app) throw notFound(`app ${key}`);
    return app;
  }

  private async ownedDeployment(app: AppRecord, version: number): Promise<DeploymentRecord> {
    const deployment = await findDeployment(this.deps.database.db, app.id, version);
    if (!deployment) throw notFound(`version ${version} of app ${app.name}`);
    return deployment;
  }

  /** The app's record with its custom domains (read now). */
  private async viewOf(app: AppRecord): Promise<AppView> {
    return this.appView(app, await listOpenCustomDomainsOfApps(this.deps.database.db, [app.id]));
  }

  /** The app's record; `domains` may hold other apps' domains too (a list's one read): only the app's are shown. */
  appView(app: AppRecord, domains: CustomDomain[] = []): AppView {
    return {
      id: app.id,
      name: app.name,
      url: this.deps.appUrls.appUrl(app.hostLabel),
      status: app.status,
      live_version: app.liveVersion,
      latest_version: app.latestVersion,
      replicas: app.replicas,
      public: app.isPublic,
      created_at: app.createdAt,
      updated_at: app.updatedAt,
      custom_domains: domains
        .filter((d) => d.appId === app.id)
        .map((d) => ({ id: d.id, domain: d.domain, url: this.deps.appUrls.customDomainUrl(d.domain), status: d.status })),
    };
  }

  deploymentView(d: DeploymentRecord): DeploymentView {
    return {
      app_id: d.appId,
      version: d.version,
      status: d.status,
      manifest: d.manifest,
      vm_ids: d.vmIds,
      error: d.error,
      created_at: d.createdAt,
      live_at: d.liveAt,
      ended_at: d.endedAt,
    };
  }
}

/** The snapshot of a version's installed VM. */
export function snapshotNameOf(appId: string, version: number): string {
  return `${appId}-v${version}`;
}

/**
 * The owner's part of an app's host: the username when it is a DNS label (lower case, no `--`, short enough that
 * `<name>--<handle>` stays within 63 characters), else `u<user id>`.
 */
export function handleOf(principal: Pick<Principal, 'userId' | 'username'>): string {
  const name = principal.username;
  return /^[a-z0-9](?:[a-z0-9-]{0,19}[a-z0-9])?$/.test(name) && !name.includes('--') ? name : `u${principal.userId}`;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';
function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += BASE32[bytes[i]! % 32];
  return out;
}

/** Output items of several replicas as text, lines prefixed, in the order they arrive. */
async function* mergeOutputs(sources: { prefix: string; items: AsyncGenerator<OutputItem> }[]): AsyncGenerator<string> {
  type Next = { index: number; result: IteratorResult<OutputItem> };
  const pending = new Map<number, Promise<Next>>();
  const pull = (index: number) =>
    pending.set(
      index,
      sources[index]!.items.next().then((result) => ({ index, result })),
    );
  sources.forEach((_source, index) => pull(index));
  const partial = sources.map(() => '');
  while (pending.size > 0) {
    const { index, result } = await Promise.race(pending.values());
    if (result.done) {
      pending.delete(index);
      if (partial[index]) yield `${sources[index]!.prefix}${partial[index]}\n`;
      continue;
    }
    pull(index);
    const item = result.value;
    if (item.kind === 'dropped') yield `${sources[index]!.prefix}… ${item.events} earlier output events are no longer kept\n`;
    if (item.kind !== 'output') continue;
    const text = partial[index] + item.event.data.toString('utf8');
    const lines = text.split('\n');
    partial[index] = lines.pop() ?? '';
    if (lines.length > 0) yield lines.map((line) => `${sources[index]!.prefix}${line}\n`).join('');
  }
}
