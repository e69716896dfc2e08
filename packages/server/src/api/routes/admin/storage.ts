/**
 * GET /v1/admin/storage and POST /v1/admin/storage/gc (administrators): what the cluster's object store holds of
 * paused VMs, snapshots and templates (bytes by kind and by user, chunks), each node's cache of them with its hit
 * rate, and garbage collection of the chunks no artifact references any more.
 */
import { Type, type Static } from 'typebox';
import type { StorageReport } from '../../../core/cluster-storage.ts';
import type { StorageUsage } from '../../../core/vm-engine.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { adminOnly } from './require-admin.ts';

const Usage = Type.Object({
  artifacts: Type.Integer(),
  logical_bytes: Type.Integer({ description: 'What their files would take whole (holes and chunks shared with others counted)' }),
  data_bytes: Type.Integer({ description: 'Their non-zero chunks (what fetching them moves; chunks shared with other artifacts counted in each)' }),
});

export const AdminStorage = Type.Object(
  {
    enabled: Type.Boolean({ description: 'Whether captures and templates go to the object store (SANDBOXD_ARTIFACTS); false: they stay on their nodes' }),
    store: Type.Union([Type.String(), Type.Null()], { description: 'The object store (s3://bucket/prefix at endpoint, or local:/dir)' }),
    by_kind: Type.Record(Type.String(), Usage, {
      description:
        'By kind: pause, snapshot, template, variant (a template’s snapshot of one shape), image (a root filesystem or kernel snapshots build on), volume',
    }),
    by_user: Type.Array(Type.Object({ user_id: Type.Integer(), usage: Usage }), {
      description: 'By owner, largest first (built-in templates’ shapes and images have none)',
    }),
    chunks: Type.Object(
      { count: Type.Integer(), bytes: Type.Integer({ description: 'What the store really holds: each distinct chunk once' }) },
      { description: 'Every chunk in the store, referenced or not (garbage collection deletes the unreferenced ones past their grace period)' },
    ),
    nodes: Type.Array(
      Type.Object({
        node_id: Type.String(),
        limit_bytes: Type.Integer({ description: 'SANDBOXD_ARTIFACT_CACHE_MB' }),
        used_bytes: Type.Integer(),
        entries: Type.Integer(),
        hits: Type.Integer({ description: 'Uses of an artifact the node had (since it started)' }),
        misses: Type.Integer({ description: 'Uses that fetched it from the object store' }),
        hit_rate: Type.Union([Type.Number(), Type.Null()]),
        hits_by_kind: Type.Record(Type.String(), Type.Integer()),
        misses_by_kind: Type.Record(Type.String(), Type.Integer()),
        reported_at: Type.String({ format: 'date-time', description: 'Each node reports its cache once a minute; this node’s is current' }),
      }),
    ),
  },
  { $id: 'AdminStorage', title: 'AdminStorage' },
);

export const AdminStorageGc = Type.Object(
  {
    chunks: Type.Integer({ description: 'Chunks in the store when it was listed' }),
    referenced: Type.Integer({ description: 'Those an artifact references' }),
    deleted: Type.Integer({
      description: 'Unreferenced chunks older than the grace period (SANDBOXD_ARTIFACT_GC_GRACE_SECONDS), deleted (a dry run: would be)',
    }),
    freed_bytes: Type.Integer(),
    kept_young: Type.Integer({ description: 'Unreferenced chunks spared as younger than the grace period (an upload under way writes its chunks first)' }),
    dry_run: Type.Boolean(),
  },
  { $id: 'AdminStorageGc', title: 'AdminStorageGc' },
);

function usageOf(usage: StorageUsage): Static<typeof Usage> {
  return { artifacts: usage.artifacts, logical_bytes: usage.logicalBytes, data_bytes: usage.dataBytes };
}

function toAdminStorage(report: StorageReport): Static<typeof AdminStorage> {
  return {
    enabled: report.enabled,
    store: report.store,
    by_kind: Object.fromEntries(Object.entries(report.byKind).map(([kind, usage]) => [kind, usageOf(usage)])),
    by_user: report.byUser.map(({ userId, usage }) => ({ user_id: userId, usage: usageOf(usage) })),
    chunks: report.chunks,
    nodes: report.nodes.map((node) => ({
      node_id: node.nodeId,
      limit_bytes: node.limitBytes,
      used_bytes: node.usedBytes,
      entries: node.entries,
      hits: node.hits,
      misses: node.misses,
      hit_rate: node.hitRate,
      hits_by_kind: node.hitsByKind,
      misses_by_kind: node.missesByKind,
      reported_at: node.reportedAt,
    })),
  };
}

export function registerAdminStorage(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/admin/storage',
    {
      schema: {
        tags: ['admin'],
        summary: "The cluster's object store of paused VMs, snapshots and templates, and each node's cache (administrators)",
        security: BEARER_OR_API_KEY,
        response: authedResponses(
          { 200: Type.Ref('AdminStorage') },
          { 403: 'Not an administrator', 503: 'The object store did not answer (OBJECT_STORE_UNAVAILABLE)' },
        ),
      },
      onRequest: adminOnly(requireAuth),
    },
    async () => toAdminStorage(await services.sandbox.storage.report()),
  );
  app.post(
    '/v1/admin/storage/gc',
    {
      schema: {
        tags: ['admin'],
        summary: 'Collect the object store’s garbage now (administrators)',
        description:
          'Deletes the chunks no paused VM, snapshot, template or volume references any more and that are older than the grace period (SANDBOXD_ARTIFACT_GC_GRACE_SECONDS). Every node also does this every SANDBOXD_ARTIFACT_GC_INTERVAL_SECONDS. `dry_run` counts without deleting.',
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({ dry_run: Type.Optional(Type.Boolean({ default: false })) }),
        response: authedResponses(
          { 200: Type.Ref('AdminStorageGc') },
          {
            403: 'Not an administrator',
            409: 'Captures stay on their nodes here (SANDBOXD_ARTIFACTS off)',
            503: 'The object store did not answer (OBJECT_STORE_UNAVAILABLE)',
          },
        ),
      },
      onRequest: adminOnly(requireAuth),
    },
    async (request) => {
      const dryRun = request.query.dry_run === true;
      const result = await services.sandbox.storage.collectGarbage({ dryRun });
      return {
        chunks: result.chunks,
        referenced: result.referenced,
        deleted: result.deleted,
        freed_bytes: result.freedBytes,
        kept_young: result.keptYoung,
        dry_run: dryRun,
      };
    },
  );
}
