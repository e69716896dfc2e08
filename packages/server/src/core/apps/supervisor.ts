/**
 * The apps supervisor: a background loop (`app_supervisor`) over the live apps this node looks after. Each turn,
 * for every replica of a live version: a start process that ended (a crash) is started again, with back-off
 * (1, 2, 4 … 60 s between restarts, back to 1 s once it was healthy for a minute); a health check failing
 * `failure_threshold` times in a row restarts it too; a replica whose VM is gone is replaced by a new VM from the
 * version's snapshot (the app's live VMs change in one store update). Events `app.crashed` and `app.restarted`.
 * After a restart of the server, a live app's replicas are adopted from the store (their kept processes found by
 * tag), so the supervisor goes on where it was.
 */
import type { Principal } from '../authenticator.ts';
import { BackgroundTimers, type BackgroundFailures } from '../background-timers.ts';
import type { Clock } from '../clock.ts';
import { recordEvent, type EventNotifier } from '../events.ts';
import type { ProcessService } from '../processes.ts';
import type { VmService } from '../vms/index.ts';
import type { Database } from '../../store/database.ts';
import { findApp, findDeployment, listLiveAppsOfNode, updateApp, updateDeployment, type AppRecord } from '../../store/apps-store.ts';
import { freshReplica, PROCESS_TIMEOUT_SECONDS, type AppService, type Replica, type RunningVersion } from './app-service.ts';
import type { AppManifest } from './manifest.ts';
import { probeHealth } from './health-probe.ts';

/** Longest wait between two restarts of a replica. */
const MAX_BACKOFF_MS = 60_000;
/** How long before its start processes' deadline a live version is restarted on new VMs. */
const RENEW_AHEAD_SECONDS = 3600;
/** A replica healthy this long has its back-off reset. */
const HEALTHY_RESET_MS = 60_000;

export interface SupervisorDeps {
  database: Database;
  clock: Clock;
  notifier: EventNotifier;
  vms: VmService;
  processes: ProcessService;
  failures: BackgroundFailures;
}

/** The wait before restart number `attempt` (0-based): 1, 2, 4 … 60 s. */
export function backoffMs(attempt: number): number {
  return Math.min(MAX_BACKOFF_MS, 1000 * 2 ** attempt);
}

export class AppSupervisor {
  private readonly timers: BackgroundTimers;
  private turn: Promise<void> | null = null;

  constructor(
    private readonly apps: AppService,
    private readonly deps: SupervisorDeps,
    private readonly tickMs = 1000,
  ) {
    this.timers = new BackgroundTimers(deps.failures);
  }

  start(): void {
    if (this.timers.running) return;
    this.timers.every('app_supervisor', this.tickMs, () => this.runTurn());
  }

  async stop(): Promise<void> {
    this.timers.clear();
    await this.turn?.catch(() => undefined);
  }

  /** One turn (a turn still running is not overlapped). */
  runTurn(): Promise<void> {
    this.turn ??= this.tick().finally(() => (this.turn = null));
    return this.turn;
  }

  private async tick(): Promise<void> {
    const live = await listLiveAppsOfNode(this.deps.database.db, this.apps.nodeId);
    await Promise.all(
      live.map(async (app) => {
        let running = this.apps.running.get(app.id);
        if (!running) running = await this.adopt(app);
        // A job is switching versions: the next turn sees the new one.
        if (!running || running.version !== app.liveVersion) return;
        // The agent ends a process after PROCESS_TIMEOUT_SECONDS: an hour before, the version moves to new VMs.
        if (!running.renewing && Date.now() - running.startedAt > (PROCESS_TIMEOUT_SECONDS - RENEW_AHEAD_SECONDS) * 1000) {
          await this.apps.renew(running);
          return;
        }
        const principal = await this.apps.principalOf(running);
        await Promise.all(running.replicas.filter((r) => !r.busy).map((replica) => this.look(app, running, replica, principal)));
      }),
    );
  }

  /** The live version of an app this node knows nothing of (after a restart): its replicas from the store. */
  private async adopt(app: AppRecord): Promise<RunningVersion | undefined> {
    const deployment = await findDeployment(this.deps.database.db, app.id, app.liveVersion!);
    if (!deployment?.snapshotId || deployment.sessionIds.length === 0) return undefined;
    const manifest = deployment.manifest as AppManifest;
    const replicas: Replica[] = deployment.sessionIds.map((sessionId, i) => freshReplica(i + 1, sessionId, deployment.vmIds[i] ?? ''));
    const running: RunningVersion = {
      appId: app.id,
      userId: app.userId,
      version: deployment.version,
      manifest,
      snapshotId: deployment.snapshotId,
      replicas,
      startedAt: Date.now(),
      renewing: false,
    };
    const principal = await this.apps.principalOf(running);
    for (const replica of replicas) {
      const kept = await this.deps.processes.list(principal, replica.sessionId).catch(() => []);
      const mine = kept.find((p) => p.status === 'running' && p.tag === `app ${app.id} v${deployment.version} r${replica.index}`);
      replica.processId = mine?.process_id ?? null;
      if (mine) running.startedAt = Math.min(running.startedAt, Date.parse(mine.started_at));
    }
    if (this.apps.running.has(app.id)) return this.apps.running.get(app.id);
    this.apps.running.set(app.id, running);
    return running;
  }

  private async look(app: AppRecord, running: RunningVersion, replica: Replica, principal: Principal): Promise<void> {
    replica.busy = true;
    try {
      const now = Date.now();
      const { manifest } = running;
      const vm = await this.deps.vms.find(replica.vmId);
      if (vm?.status === 'starting') return;
      if (!vm || vm.status === 'killed') {
        if (await this.crashed(app, running, replica, 'vm_gone', null)) await this.replace(app, running, replica, principal);
        return;
      }
      if (vm.status !== 'active') return;
      const view = replica.processId ? await this.deps.processes.get(principal, replica.sessionId, replica.processId).catch(() => null) : null;
      if (!view || view.status !== 'running') {
        if (await this.crashed(app, running, replica, 'exited', view?.exit_code ?? null)) await this.restartProcess(app, running, replica, principal);
        return;
      }
      if (now - replica.lastProbeAt < manifest.health_check.interval_seconds * 1000 && !replica.down) return;
      replica.lastProbeAt = now;
      const result = await probeHealth(
        () => this.apps.tunnel(replica.vmId, manifest.port),
        manifest.health_check.path,
        manifest.health_check.timeout_seconds * 1000,
      );
      if (result.healthy) {
        replica.healthFailures = 0;
        replica.healthySince ??= now;
        if (now - replica.healthySince >= HEALTHY_RESET_MS) replica.attempt = 0;
        if (replica.down) {
          replica.down = false;
          if (running.replicas.every((r) => !r.down)) await this.setStatus(app.id, 'live');
        }
        return;
      }
      if (replica.down) return;
      replica.healthFailures += 1;
      if (replica.healthFailures < manifest.health_check.failure_threshold) return;
      if (await this.crashed(app, running, replica, 'unhealthy', null)) {
        if (replica.processId) await this.deps.processes.kill(principal, replica.sessionId, replica.processId).catch(() => undefined);
        await this.restartProcess(app, running, replica, principal);
      }
    } catch (error) {
      this.deps.failures.report('app_supervisor', error);
    } finally {
      replica.busy = false;
    }
  }

  /**
   * Marks the replica down (once per crash: its event, the app's status) and answers whether its back-off allows a
   * restart now.
   */
  private async crashed(
    app: AppRecord,
    running: RunningVersion,
    replica: Replica,
    reason: 'exited' | 'unhealthy' | 'vm_gone',
    exitCode: number | null,
  ): Promise<boolean> {
    const now = Date.now();
    if (!replica.down) {
      replica.down = true;
      replica.healthySince = null;
      replica.healthFailures = 0;
      replica.nextRestartAt = Math.max(replica.nextRestartAt, now + backoffMs(replica.attempt));
      await this.deps.database.db.transaction().execute(async (trx) => {
        if (!(await findApp(trx, app.id))) return;
        await updateApp(trx, app.id, { status: 'crashed' }, this.deps.clock.now().toISOString());
        await recordEvent(trx, this.deps.clock, {
          type: 'app.crashed',
          userId: app.userId,
          subjectId: app.id,
          data: { app_id: app.id, name: app.name, version: running.version, vm_id: replica.vmId, replica: replica.index, reason, exit_code: exitCode },
        });
      });
      this.deps.notifier.committed();
    }
    return now >= replica.nextRestartAt;
  }

  private async restartProcess(app: AppRecord, running: RunningVersion, replica: Replica, principal: Principal): Promise<void> {
    this.scheduleNext(replica);
    replica.processId = await this.apps.startProcess(principal, replica, running.manifest, app.id, running.version);
    await this.restarted(app, running, replica);
  }

  /** A new VM from the version's snapshot in place of one that is gone; the app's live VMs change in one update. */
  private async replace(app: AppRecord, running: RunningVersion, replica: Replica, principal: Principal): Promise<void> {
    this.scheduleNext(replica);
    const started = await this.apps.startVm(principal, app, running.version, running.manifest, { kind: 'snapshot', id: running.snapshotId });
    const oldVmId = replica.vmId;
    replica.sessionId = started.session.id;
    replica.vmId = started.vmId;
    replica.processId = null;
    const stillLive = await this.deps.database.db.transaction().execute(async (trx) => {
      const current = await findApp(trx, app.id);
      if (!current || current.liveVersion !== running.version) return false;
      const now = this.deps.clock.now().toISOString();
      await updateApp(trx, app.id, { liveVmIds: current.liveVmIds.map((id) => (id === oldVmId ? started.vmId : id)) }, now);
      const deployment = await findDeployment(trx, app.id, running.version);
      if (deployment) {
        await updateDeployment(trx, app.id, running.version, {
          vmIds: running.replicas.map((r) => r.vmId),
          sessionIds: running.replicas.map((r) => r.sessionId),
        });
      }
      return true;
    });
    if (!stillLive) {
      await this.apps.killVms(principal, [started.vmId]);
      return;
    }
    replica.processId = await this.apps.startProcess(principal, replica, running.manifest, app.id, running.version);
    await this.restarted(app, running, replica);
  }

  private scheduleNext(replica: Replica): void {
    replica.attempt += 1;
    replica.nextRestartAt = Date.now() + backoffMs(replica.attempt);
    replica.lastProbeAt = 0;
  }

  private async restarted(app: AppRecord, running: RunningVersion, replica: Replica): Promise<void> {
    await recordEvent(this.deps.database.db, this.deps.clock, {
      type: 'app.restarted',
      userId: app.userId,
      subjectId: app.id,
      data: { app_id: app.id, name: app.name, version: running.version, vm_id: replica.vmId, replica: replica.index, attempt: replica.attempt },
    });
    this.deps.notifier.committed();
  }

  private async setStatus(appId: string, status: 'live' | 'crashed'): Promise<void> {
    await updateApp(this.deps.database.db, appId, { status }, this.deps.clock.now().toISOString());
  }
}
