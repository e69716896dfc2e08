/**
 * Persistence of apps and their deployments (migration 0028). The records are this file's own: apps are read by
 * the core's app service and the preview proxy's host resolution only.
 */
import type { Executor } from './database.ts';
import type { AppDeploymentsTable, AppsTable } from './schema.ts';

export type AppStatus = 'deploying' | 'live' | 'failed' | 'crashed' | 'stopped';
export type DeploymentStatus = 'pending' | 'building' | 'starting' | 'checking' | 'live' | 'failed' | 'superseded' | 'stopped';

export interface AppRecord {
  id: string;
  userId: number;
  name: string;
  hostLabel: string;
  status: AppStatus;
  liveVersion: number | null;
  latestVersion: number;
  replicas: number;
  isPublic: boolean;
  livePort: number | null;
  liveVmIds: string[];
  nodeId: string;
  createdAt: string;
  updatedAt: string;
}

export interface DeploymentRecord {
  appId: string;
  version: number;
  status: DeploymentStatus;
  /** The validated manifest (JSON). */
  manifest: Record<string, unknown>;
  sessionIds: string[];
  vmIds: string[];
  snapshotId: string | null;
  error: string | null;
  createdAt: string;
  liveAt: string | null;
  endedAt: string | null;
}

const parseList = (text: string): string[] => JSON.parse(text) as string[];

function toApp(row: AppsTable): AppRecord {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    hostLabel: row.host_label,
    status: row.status as AppStatus,
    liveVersion: row.live_version,
    latestVersion: row.latest_version,
    replicas: row.replicas,
    isPublic: row.is_public === 1,
    livePort: row.live_port,
    liveVmIds: parseList(row.live_vm_ids),
    nodeId: row.node_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toDeployment(row: Omit<AppDeploymentsTable, 'log'>): DeploymentRecord {
  return {
    appId: row.app_id,
    version: row.version,
    status: row.status as DeploymentStatus,
    manifest: JSON.parse(row.manifest) as Record<string, unknown>,
    sessionIds: parseList(row.session_ids),
    vmIds: parseList(row.vm_ids),
    snapshotId: row.snapshot_id,
    error: row.error,
    createdAt: row.created_at,
    liveAt: row.live_at,
    endedAt: row.ended_at,
  };
}

export async function insertApp(db: Executor, app: AppRecord): Promise<void> {
  await db
    .insertInto('apps')
    .values({
      id: app.id,
      user_id: app.userId,
      name: app.name,
      host_label: app.hostLabel,
      status: app.status,
      live_version: app.liveVersion,
      latest_version: app.latestVersion,
      replicas: app.replicas,
      is_public: app.isPublic ? 1 : 0,
      live_port: app.livePort,
      live_vm_ids: JSON.stringify(app.liveVmIds),
      node_id: app.nodeId,
      created_at: app.createdAt,
      updated_at: app.updatedAt,
    })
    .execute();
}

/** The user's app by id or by name. */
export async function findOwnedApp(db: Executor, userId: number, idOrName: string): Promise<AppRecord | undefined> {
  const row = await db
    .selectFrom('apps')
    .selectAll()
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
    .executeTakeFirst();
  return row && toApp(row);
}

export async function findApp(db: Executor, id: string): Promise<AppRecord | undefined> {
  const row = await db.selectFrom('apps').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toApp(row);
}

/** The app a host name's first label names (the preview proxy's read). */
export async function findAppByHostLabel(db: Executor, hostLabel: string): Promise<AppRecord | undefined> {
  const row = await db.selectFrom('apps').selectAll().where('host_label', '=', hostLabel).executeTakeFirst();
  return row && toApp(row);
}

/** The user's apps, newest first. */
export async function listApps(db: Executor, userId: number): Promise<AppRecord[]> {
  const rows = await db.selectFrom('apps').selectAll().where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id').execute();
  return rows.map(toApp);
}

/** Apps looked after by a node that have a live version. */
export async function listLiveAppsOfNode(db: Executor, nodeId: string): Promise<AppRecord[]> {
  const rows = await db.selectFrom('apps').selectAll().where('node_id', '=', nodeId).where('live_version', 'is not', null).execute();
  return rows.map(toApp);
}

export interface AppPatch {
  status?: AppStatus;
  liveVersion?: number | null;
  latestVersion?: number;
  replicas?: number;
  isPublic?: boolean;
  livePort?: number | null;
  liveVmIds?: string[];
}

export async function updateApp(db: Executor, id: string, patch: AppPatch, at: string): Promise<void> {
  await db
    .updateTable('apps')
    .set({
      ...(patch.status !== undefined ? { status: patch.status } : {}),
      ...(patch.liveVersion !== undefined ? { live_version: patch.liveVersion } : {}),
      ...(patch.latestVersion !== undefined ? { latest_version: patch.latestVersion } : {}),
      ...(patch.replicas !== undefined ? { replicas: patch.replicas } : {}),
      ...(patch.isPublic !== undefined ? { is_public: patch.isPublic ? 1 : 0 } : {}),
      ...(patch.livePort !== undefined ? { live_port: patch.livePort } : {}),
      ...(patch.liveVmIds !== undefined ? { live_vm_ids: JSON.stringify(patch.liveVmIds) } : {}),
      updated_at: at,
    })
    .where('id', '=', id)
    .execute();
}

export async function deleteAppRow(db: Executor, id: string): Promise<boolean> {
  const result = await db.deleteFrom('apps').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertDeployment(db: Executor, deployment: DeploymentRecord): Promise<void> {
  await db
    .insertInto('app_deployments')
    .values({
      app_id: deployment.appId,
      version: deployment.version,
      status: deployment.status,
      manifest: JSON.stringify(deployment.manifest),
      session_ids: JSON.stringify(deployment.sessionIds),
      vm_ids: JSON.stringify(deployment.vmIds),
      snapshot_id: deployment.snapshotId,
      error: deployment.error,
      log: '',
      created_at: deployment.createdAt,
      live_at: deployment.liveAt,
      ended_at: deployment.endedAt,
    })
    .execute();
}

const DEPLOYMENT_COLUMNS = [
  'app_id',
  'version',
  'status',
  'manifest',
  'session_ids',
  'vm_ids',
  'snapshot_id',
  'error',
  'created_at',
  'live_at',
  'ended_at',
] as const;

export async function findDeployment(db: Executor, appId: string, version: number): Promise<DeploymentRecord | undefined> {
  const row = await db.selectFrom('app_deployments').select(DEPLOYMENT_COLUMNS).where('app_id', '=', appId).where('version', '=', version).executeTakeFirst();
  return row && toDeployment(row);
}

/** An app's deployments, newest version first. */
export async function listDeployments(db: Executor, appId: string): Promise<DeploymentRecord[]> {
  const rows = await db.selectFrom('app_deployments').select(DEPLOYMENT_COLUMNS).where('app_id', '=', appId).orderBy('version', 'desc').execute();
  return rows.map(toDeployment);
}

export async function readDeploymentLog(db: Executor, appId: string, version: number): Promise<string | undefined> {
  const row = await db.selectFrom('app_deployments').select('log').where('app_id', '=', appId).where('version', '=', version).executeTakeFirst();
  return row?.log;
}

export interface DeploymentPatch {
  status?: DeploymentStatus;
  sessionIds?: string[];
  vmIds?: string[];
  snapshotId?: string | null;
  error?: string | null;
  log?: string;
  liveAt?: string | null;
  endedAt?: string | null;
}

export async function updateDeployment(db: Executor, appId: string, version: number, patch: DeploymentPatch): Promise<void> {
  await db
    .updateTable('app_deployments')
    .set({
      ...(patch.status !== undefined ? { status: patch.status } : {}),
      ...(patch.sessionIds !== undefined ? { session_ids: JSON.stringify(patch.sessionIds) } : {}),
      ...(patch.vmIds !== undefined ? { vm_ids: JSON.stringify(patch.vmIds) } : {}),
      ...(patch.snapshotId !== undefined ? { snapshot_id: patch.snapshotId } : {}),
      ...(patch.error !== undefined ? { error: patch.error } : {}),
      ...(patch.log !== undefined ? { log: patch.log } : {}),
      ...(patch.liveAt !== undefined ? { live_at: patch.liveAt } : {}),
      ...(patch.endedAt !== undefined ? { ended_at: patch.endedAt } : {}),
    })
    .where('app_id', '=', appId)
    .where('version', '=', version)
    .execute();
}
