/**
 * The database part of cluster mode under the load of a large deployment, without VMs: a private PostgreSQL
 * (Debian's, as the tests start it) with the real migrations, `NODES` registered nodes and `VMS` live VM rows
 * spread over them. Measured with the store functions the nodes run:
 *   - a heartbeat (the node's load from its VM rows, the heartbeat UPDATE, the dead-node scan and the look for
 *     live VMs on dead nodes), all nodes at once, as when their timers line up;
 *   - a placement decision (the node table and the live load per node);
 *   - kill-queue round trips through pg-boss (send on one node, fetch and complete on another);
 *   - how many connections the deployment would hold (each node's pool is 10, pg-boss's 4) against
 *     PostgreSQL's max_connections.
 * `npm run bench:cluster-db` (needs Debian's postgresql, which `npm test`'s set-up installs); ends with one JSON line.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { systemClock } from '../packages/server/src/core/clock.ts';
import { PgBossKillQueue } from '../packages/server/src/cluster/pg-boss-kill-queue.ts';
import { Ownership } from '../packages/server/src/core/cluster/ownership.ts';
import { Placement } from '../packages/server/src/core/cluster/placement.ts';
import { openDatabase } from '../packages/server/src/store/database.ts';
import { declareDeadNodes, heartbeatNode, upsertNode } from '../packages/server/src/store/nodes-store.ts';
import { listLiveVmsOfNode, listLiveVmsOnDeadNodes, liveLoadByNode } from '../packages/server/src/store/vms-store.ts';
import { startPostgres } from '../packages/server/test/helpers/postgres.ts';
import { percentile } from './first-result.ts';

const NODES = Number(process.env.BENCH_NODES ?? 100);
const VMS = Number(process.env.BENCH_VMS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const KILLS = Number(process.env.BENCH_KILLS ?? 100);
const log = (message: string) => process.stderr.write(`[bench:cluster-db] ${message}\n`);
const ms = (values: number[], p: number) => Math.round(percentile(values, p) * 10) / 10;

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const start = performance.now();
  const value = await fn();
  return [performance.now() - start, value];
}

async function main(): Promise<void> {
  const postgres = await startPostgres();
  const database = await openDatabase({ dataDir: '', databaseUrl: postgres.url });
  const results: Record<string, number> = { nodes: NODES, vms: VMS };
  try {
    const db = database.db;
    const now = new Date().toISOString();
    const user = await db
      .insertInto('users')
      .values({ username: 'bench', password_hash: 'x', plan: 'enterprise', is_admin: 0, created_at: now })
      .returning('id')
      .executeTakeFirstOrThrow();
    const nodeIds = Array.from({ length: NODES }, (_, i) => `node-${String(i).padStart(3, '0')}`);
    for (const id of nodeIds) {
      await upsertNode(db, {
        id,
        internal_url: `http://10.0.${Math.floor(Number(id.slice(5)) / 250)}.${Number(id.slice(5)) % 250}:8080`,
        state: 'live',
        drained: 0,
        deployment_drain: null,
        vcpus: 512,
        memory_mb: 512 * 1024,
        vm_slots: 256,
        templates: '["default","browser","desktop"]',
        running_vms: 0,
        used_vcpus: 0,
        used_memory_mb: 0,
        version: 'bench',
        started_at: now,
        heartbeat_at: now,
        dead_at: null,
      });
    }
    log(`inserting ${VMS} live VM rows over ${NODES} nodes`);
    const expires = new Date(Date.now() + 3_600_000).toISOString();
    for (let start = 0; start < VMS; start += 1000) {
      const rows = Array.from({ length: Math.min(1000, VMS - start) }, (_, i) => ({
        id: `vm-${randomBytes(8).toString('hex')}`,
        user_id: user.id,
        session_id: null,
        node_id: nodeIds[(start + i) % NODES]!,
        status: 'active' as const,
        end_reason: null,
        vcpu_count: 2,
        memory_mb: 1024,
        lifetime_seconds: 3600,
        template_id: 'default',
        ip: null,
        created_at: now,
        started_at: now,
        expires_at: expires,
        ended_at: null,
        name: null,
        base_snapshot_id: null,
        paused_at: null,
        remaining_seconds: null,
        python_context: null,
      }));
      await db.insertInto('vms').values(rows).execute();
    }
    await database.ping();
    // Planner statistics, as autovacuum would have them in a deployment that ran for a while.
    await sql`ANALYZE`.execute(db);

    // Every node's heartbeat at once: its load from its VM rows, then the UPDATE, then the dead-node scan.
    const beats: number[] = [];
    const bursts: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const [burstMs] = await timed(() =>
        Promise.all(
          nodeIds.map(async (id) => {
            const [beatMs] = await timed(async () => {
              const load = (await liveLoadByNode(db, id)).get(id);
              const stamp = new Date().toISOString();
              await heartbeatNode(db, id, stamp, {
                running_vms: load?.vms ?? 0,
                used_vcpus: load?.vcpus ?? 0,
                used_memory_mb: load?.memoryMb ?? 0,
                templates: '["default","browser","desktop"]',
              });
              await declareDeadNodes(db, new Date(Date.now() - 30_000).toISOString(), stamp);
              await listLiveVmsOnDeadNodes(db);
            });
            beats.push(beatMs);
          }),
        ),
      );
      bursts.push(burstMs);
    }
    results.heartbeat_p50_ms = ms(beats, 50);
    results.heartbeat_p99_ms = ms(beats, 99);
    results.heartbeat_burst_all_nodes_p50_ms = ms(bursts, 50);
    log(
      `heartbeat (load + update + dead scan) p50 ${results.heartbeat_p50_ms} ms, p99 ${results.heartbeat_p99_ms} ms; all ${NODES} at once ${results.heartbeat_burst_all_nodes_p50_ms} ms`,
    );

    const placement = new Placement(database, systemClock, nodeIds[0]!, 30_000);
    await db.updateTable('cluster_nodes').set({ drained: 1 }).where('id', '=', nodeIds[0]!).execute();
    const placements: number[] = [];
    for (let i = 0; i < ROUNDS * 20; i++) placements.push((await timed(() => placement.choose({ vcpuCount: 2, memoryMb: 1024, templateId: 'default' })))[0]);
    results.placement_p50_ms = ms(placements, 50);
    results.placement_p99_ms = ms(placements, 99);
    log(`placement (drained node: node table + live load per node over ${VMS} VMs) p50 ${results.placement_p50_ms} ms, p99 ${results.placement_p99_ms} ms`);

    // Kill queue: node-000 dispatches kills of node-001's VMs; node-001's queue worker looks each VM up and
    // "kills" it (records the time: no engine here), as the real kill queue does on two nodes.
    const silent = { info: () => {}, warn: () => {}, error: (o: unknown) => log(`pg-boss: ${JSON.stringify(o)}`) } as never;
    const sentAt = new Map<string, number>();
    const roundTrips: number[] = [];
    let done!: () => void;
    const all = new Promise<void>((resolve) => (done = resolve));
    const queue = (nodeId: string) =>
      new PgBossKillQueue(
        database,
        {
          connectionString: postgres.url,
          ownership: new Ownership(nodeId),
          strictOwnership: false,
          killLocal: async (vmId) => {
            roundTrips.push(performance.now() - sentAt.get(vmId)!);
            if (roundTrips.length === KILLS) done();
          },
        },
        silent,
      );
    const sender = queue(nodeIds[0]!);
    const worker = queue(nodeIds[1]!);
    await sender.start();
    await worker.start();
    const targets = (await listLiveVmsOfNode(db, nodeIds[1]!)).slice(0, KILLS).map((vm) => vm.id);
    if (targets.length < KILLS) throw new Error(`only ${targets.length} VMs on ${nodeIds[1]}: raise BENCH_VMS`);
    const [killsMs] = await timed(async () => {
      for (const vmId of targets) {
        sentAt.set(vmId, performance.now());
        await sender.dispatch(nodeIds[1]!, { vmId, from: nodeIds[0]! });
      }
      await all;
    });
    results.kill_queue_round_trip_p50_ms = ms(roundTrips, 50);
    results.kill_queue_round_trip_p99_ms = ms(roundTrips, 99);
    results.kill_queue_per_second = Math.round((KILLS / killsMs) * 1000);
    log(
      `kill queue round trip (dispatch → owner's worker) p50 ${results.kill_queue_round_trip_p50_ms} ms, p99 ${results.kill_queue_round_trip_p99_ms} ms; ${results.kill_queue_per_second} kills/s`,
    );
    await worker.stop();
    await sender.stop();

    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    results.postgres_max_connections = Number((await client.query('SHOW max_connections')).rows[0].max_connections);
    await client.end();
    results.connections_needed = NODES * (10 + 4);
    log(
      `connections: ${NODES} nodes × (store pool 10 + pg-boss 4) = ${results.connections_needed} against max_connections ${results.postgres_max_connections}`,
    );
  } finally {
    await database.close();
    await postgres.stop();
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
