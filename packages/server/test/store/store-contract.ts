/**
 * The store's contract: what the core relies on from any SQL backend. Run against SQLite and a real
 * PostgreSQL by the two test files beside this one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Database, isUniqueViolation } from '../../src/store/database.ts';
import { findApiKey, findApiKeyByHash, insertApiKey, listApiKeys, touchApiKey, updateApiKey } from '../../src/store/api-keys-store.ts';
import { readOrInitSetting, readSetting } from '../../src/store/settings-store.ts';
import { insertAuditEvent, listAuditEvents } from '../../src/store/audit-store.ts';
import { claimEventDispatch, insertEvent, listUndispatchedEvents } from '../../src/store/events-store.ts';
import {
  claimDelivery,
  insertDelivery,
  insertEndpoint,
  listDeliveries,
  listDueDeliveries,
  listReceivingEndpoints,
  nextDueTime,
  settleDelivery,
} from '../../src/store/webhooks-store.ts';
import { countUsers, findUserById, findUserByUsername, insertUser, updateUserPlan } from '../../src/store/users-store.ts';
import { findSession, findSessionWithVm, insertSession, listSessionsWithVm, updateSession } from '../../src/store/sessions-store.ts';
import { findVm, insertVm, listLiveVmsOfNode, snapshotInUseByVm, transitionVm } from '../../src/store/vms-store.ts';
import {
  addSessionNetwork,
  deleteNetworkMember,
  deleteNetworkRow,
  findMemberByAddress,
  findNetwork,
  findNetworkByName,
  insertNetwork,
  insertNetworkMember,
  listNetworkMembers,
  listNetworks,
  networkCidrs,
  networksOfVm,
  pruneEndedMembers,
  sessionNetworkIds,
  takenAddresses,
  vmsOnNetworks,
} from '../../src/store/networks-store.ts';
import {
  deleteVolumeRow,
  findSessionVolumes,
  findVolume,
  insertVolume,
  insertVolumeAttachment,
  listVolumes,
  openAttachments,
  replaceSessionVolumes,
  totalVolumeMb,
  vmAttachments,
} from '../../src/store/volumes-store.ts';
import {
  completeSnapshot,
  deleteSnapshotRow,
  findChildSnapshot,
  findSnapshotByName,
  insertSnapshot,
  listCreatingSnapshotsOfNode,
  listSnapshots,
} from '../../src/store/snapshots-store.ts';
import {
  appendTemplateLog,
  deleteTemplateRow,
  findTemplateByName,
  insertTemplate,
  listBuildingTemplatesOfNode,
  listTemplateLog,
  listTemplates,
  updateBuildingTemplate,
} from '../../src/store/templates-store.ts';
import { failInFlightExecutions, findExecution, insertExecution, updateExecution } from '../../src/store/executions-store.ts';
import type { NewExecution } from '../../src/store/executions-store.ts';
import { insertEgressLog } from '../../src/store/egress-store.ts';
import { egressPerDaySince, executionsPerDaySince, vaultUsePerDaySince } from '../../src/store/usage-store.ts';
import { insertVaultRequestLogs } from '../../src/store/vaults-store.ts';
import {
  claimCheck,
  failPendingClaims,
  findCustomDomain,
  insertCustomDomain,
  listDueChecks,
  listVerifiedDomainNames,
  failVerifiedClaim,
  markVerified,
  nextCheckDue,
  recordFailedCheck,
  recordMissedReverify,
  recordReverified,
} from '../../src/store/custom-domains-store.ts';
import type { CustomDomain } from '../../src/model.ts';

const iso = (offsetMs = 0) => new Date(Date.now() + offsetMs).toISOString();

export function defineStoreContract(name: string, open: () => Promise<{ database: Database; cleanup: () => Promise<void> }>): void {
  describe(`store contract: ${name}`, () => {
    let database: Database;
    let cleanup: () => Promise<void>;

    before(async () => {
      ({ database, cleanup } = await open());
    });
    after(async () => {
      await database.close();
      await cleanup();
    });

    test('migrations leave an empty, usable schema and ping answers', async () => {
      await database.ping();
      assert.equal(await countUsers(database.db), 0);
    });

    test('users: insert returns the row with a generated id; lookups by id and name', async () => {
      const row = await insertUser(database.db, { username: 'ann', passwordHash: 'h', plan: 'free', isAdmin: false, createdAt: iso() });
      assert.ok(Number.isInteger(row.id) && row.id > 0);
      assert.equal((await findUserById(database.db, row.id))?.username, 'ann');
      assert.equal((await findUserByUsername(database.db, 'ann'))?.id, row.id);
      assert.equal(await findUserByUsername(database.db, 'nobody'), undefined);
      assert.equal(await countUsers(database.db), 1);
    });

    test('users: a taken username is a unique violation', async () => {
      await assert.rejects(insertUser(database.db, { username: 'ann', passwordHash: 'h', plan: 'free', isAdmin: false, createdAt: iso() }), (error) =>
        isUniqueViolation(error),
      );
    });

    test('users: plan changes persist', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      assert.equal(await updateUserPlan(database.db, ann.id, 'pro'), true);
      assert.equal((await findUserById(database.db, ann.id))?.plan, 'pro');
    });

    test('api keys: scoped to their user, found by hash, updated and soft-deleted', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const bob = await insertUser(database.db, { username: 'bob', passwordHash: 'h', plan: 'free', isAdmin: false, createdAt: iso() });
      const base = { description: null, status: 'active' as const, created_at: iso(), expires_at: null, last_used_at: null, deleted_at: null };
      const k1 = await insertApiKey(database.db, { ...base, user_id: ann.id, key_hash: 'hash-1', key_prefix: 'sbx_sk_1' });
      const k2 = await insertApiKey(database.db, { ...base, user_id: ann.id, key_hash: 'hash-2', key_prefix: 'sbx_sk_2', expires_at: iso(60_000) });
      const k3 = await insertApiKey(database.db, { ...base, user_id: bob.id, key_hash: 'hash-3', key_prefix: 'sbx_sk_3' });

      assert.deepEqual(
        (await listApiKeys(database.db, ann.id)).map((k) => k.id),
        [k1.id, k2.id],
      );
      assert.deepEqual(
        (await listApiKeys(database.db, bob.id)).map((k) => k.id),
        [k3.id],
      );
      assert.equal(await findApiKey(database.db, bob.id, k1.id), undefined, "bob must not see ann's key");
      assert.equal((await findApiKeyByHash(database.db, 'hash-2'))?.id, k2.id);
      assert.equal((await findApiKeyByHash(database.db, 'hash-2'))?.expires_at, k2.expires_at, 'timestamps round-trip as the same ISO text');

      assert.equal(await updateApiKey(database.db, bob.id, k1.id, { description: 'x' }), undefined, "bob must not update ann's key");
      assert.equal((await updateApiKey(database.db, ann.id, k1.id, { description: 'renamed' }))?.description, 'renamed');

      await touchApiKey(database.db, k1.id, '2030-01-01T00:00:00.000Z');
      assert.equal((await findApiKey(database.db, ann.id, k1.id))?.last_used_at, '2030-01-01T00:00:00.000Z');

      await updateApiKey(database.db, ann.id, k1.id, { status: 'deleted', deleted_at: iso() });
      assert.equal(await findApiKey(database.db, ann.id, k1.id), undefined);
      assert.deepEqual(
        (await listApiKeys(database.db, ann.id)).map((k) => k.id),
        [k2.id],
      );
      assert.equal((await findApiKeyByHash(database.db, 'hash-1'))?.status, 'deleted', 'deleted keys stay for the audit trail');
      assert.equal(await updateApiKey(database.db, ann.id, k1.id, { description: 'again' }), undefined, 'a deleted key cannot be changed');
    });

    test('api keys: key hashes are unique', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      await assert.rejects(
        insertApiKey(database.db, {
          user_id: ann.id,
          key_hash: 'hash-2',
          key_prefix: 'p',
          description: null,
          status: 'active' as const,
          created_at: iso(),
          expires_at: null,
          last_used_at: null,
          deleted_at: null,
        }),
        (error) => isUniqueViolation(error),
      );
    });

    test('settings: the first writer wins and later readers agree', async () => {
      assert.equal(await readSetting(database.db, 'x'), undefined);
      assert.equal(await readOrInitSetting(database.db, 'x', 'first'), 'first');
      assert.equal(await readOrInitSetting(database.db, 'x', 'second'), 'first');
    });

    test('webhook queue: an event is fanned out once; a due delivery is claimed by one sender and settled only by it', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const event = await insertEvent(database.db, {
        id: 'evt_contract',
        userId: ann.id,
        type: 'vm.started',
        group: 'vm',
        subjectId: null,
        data: { vm_id: 'vm-1' },
        createdAt: iso(),
      });
      assert.deepEqual(await listUndispatchedEvents(database.db, 10), [event]);
      assert.deepEqual(event.data, { vm_id: 'vm-1' }, 'the payload comes back as it was recorded');
      const fanOuts = await Promise.all([claimEventDispatch(database.db, event.seq, iso()), claimEventDispatch(database.db, event.seq, iso())]);
      assert.equal(fanOuts.filter(Boolean).length, 1, 'exactly one fan-out wins');
      assert.deepEqual(await listUndispatchedEvents(database.db, 10), []);

      const stamp = iso();
      await insertEndpoint(database.db, {
        id: 'we_contract',
        userId: ann.id,
        url: 'https://hooks.example.com/',
        description: null,
        eventPatterns: ['vm.*', 'api_key.created'],
        enabled: true,
        secretCiphertext: 'sealed',
        previousSecretCiphertext: null,
        previousSecretExpiresAt: null,
        verifiedAt: null,
        createdAt: stamp,
        updatedAt: stamp,
        deletedAt: null,
      });
      const [receiving] = await listReceivingEndpoints(database.db, ann.id);
      assert.deepEqual([receiving?.id, receiving?.eventPatterns, receiving?.enabled], ['we_contract', ['vm.*', 'api_key.created'], true]);
      assert.deepEqual(await listReceivingEndpoints(database.db, null), [], 'system events go to administrators only');

      const newDelivery = (deliveryId: string) =>
        insertDelivery(database.db, {
          delivery_id: deliveryId,
          endpoint_id: 'we_contract',
          user_id: ann.id,
          event_id: 'evt_contract',
          event_type: 'vm.started',
          event_group: 'vm',
          status: 'pending',
          scheduled_attempt: 1,
          next_retry_at: stamp,
          last_attempt_at: null,
          delivered_at: null,
          final_http_status: null,
          error_message: null,
          replay_of_delivery_id: null,
          lease_until: null,
          lease_owner: null,
          created_at: stamp,
          updated_at: stamp,
        });
      const first = await newDelivery('wd_contract_1');
      assert.equal(await nextDueTime(database.db), stamp);
      assert.deepEqual(
        (await listDueDeliveries(database.db, iso(1000), 10)).map((d) => d.id),
        [first.id],
      );
      const [a, b] = await Promise.all([
        claimDelivery(database.db, first.id, iso(1000), iso(60_000), 'node-a'),
        claimDelivery(database.db, first.id, iso(1000), iso(60_000), 'node-b'),
      ]);
      assert.equal(Number(a) + Number(b), 1, 'exactly one sender wins the claim');
      const [owner, loser] = a ? ['node-a', 'node-b'] : ['node-b', 'node-a'];
      assert.deepEqual(await listDueDeliveries(database.db, iso(1000), 10), [], 'a held lease hides the row');
      assert.equal(await settleDelivery(database.db, first.id, loser!, { status: 'failed' }), undefined, 'only the lease holder settles');
      const settled = await settleDelivery(database.db, first.id, owner!, { status: 'succeeded', next_retry_at: null });
      assert.equal(settled?.status, 'succeeded');
      assert.equal(settled?.lease_owner, null);

      const second = await newDelivery('wd_contract_2');
      assert.equal(await claimDelivery(database.db, second.id, iso(1000), iso(2000), 'dead-node'), true);
      assert.deepEqual(await listDueDeliveries(database.db, iso(1500), 10), [], 'not while the lease holds');
      assert.deepEqual(
        (await listDueDeliveries(database.db, iso(3000), 10)).map((d) => d.id),
        [second.id],
        'an expired lease is due again',
      );
      assert.equal(await claimDelivery(database.db, second.id, iso(3000), iso(60_000), 'node-a'), true);
      assert.deepEqual(
        (await listDeliveries(database.db, { userId: ann.id, limit: 10 })).map((d) => d.delivery_id),
        ['wd_contract_2', 'wd_contract_1'],
      );
      assert.deepEqual(
        (await listDeliveries(database.db, { userId: ann.id, beforeSeq: second.id, limit: 10 })).map((d) => d.delivery_id),
        ['wd_contract_1'],
      );
    });

    test('audit log: append, filter by user and outcome, newest first', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const base = { action: 'auth.sign_in', target: null, sourceIp: '127.0.0.1', userAgent: null, detail: null };
      const actor = { userId: ann.id, username: 'ann', via: 'password' as const, apiKeyId: null };
      const e1 = await insertAuditEvent(database.db, { ...base, actor, outcome: 'success', createdAt: iso(), detail: { reason: 'a', n: 1 } });
      const e2 = await insertAuditEvent(database.db, { ...base, actor, outcome: 'failure', createdAt: iso() });
      const e3 = await insertAuditEvent(database.db, { ...base, actor: { ...actor, userId: null, username: 'nobody' }, outcome: 'failure', createdAt: iso() });
      assert.deepEqual(e1.detail, { reason: 'a', n: 1 }, 'detail comes back as it was recorded');
      assert.deepEqual(
        (await listAuditEvents(database.db, { userId: ann.id, limit: 10 })).map((e) => e.id),
        [e2.id, e1.id],
      );
      assert.deepEqual(
        (await listAuditEvents(database.db, { outcome: 'failure', limit: 10 })).map((e) => e.id),
        [e3.id, e2.id],
      );
      assert.deepEqual(
        (await listAuditEvents(database.db, { beforeId: e3.id, limit: 1 })).map((e) => e.id),
        [e2.id],
      );
    });

    test('snapshots and templates: records come back as written (JSON parsed, byte counts as numbers), names unique per user, builds update only while building', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const snapshot = {
        id: 'snap_contract1',
        userId: ann.id,
        name: 'first',
        status: 'ready' as const,
        sourceVmId: 'vm-x',
        parentId: null,
        templateId: 'default',
        nodeId: 'node-a',
        vcpuCount: 2,
        memoryMb: 512,
        diskSizeMb: 4096,
        memoryBytes: 5_000_000_000,
        diskBytes: 1234,
        stateBytes: 80_000,
        pauseMs: 31,
        durationMs: 2200,
        metadata: { stage: 'prod' },
        pythonContext: 'session-1',
        createdAt: iso(),
      };
      assert.deepEqual(await insertSnapshot(database.db, snapshot), snapshot);
      const child = await insertSnapshot(database.db, { ...snapshot, id: 'snap_contract2', name: 'second', parentId: snapshot.id, createdAt: iso(1000) });
      assert.deepEqual(await findSnapshotByName(database.db, ann.id, 'first'), snapshot);
      assert.equal((await findChildSnapshot(database.db, snapshot.id))?.id, child.id);
      assert.deepEqual(
        (await listSnapshots(database.db, ann.id, 10, 0)).map((s) => s.id),
        [child.id, snapshot.id],
      );
      await assert.rejects(insertSnapshot(database.db, { ...snapshot, id: 'snap_contract3' }), 'a name is unique per user');
      const reserved = await insertSnapshot(database.db, {
        ...snapshot,
        id: 'snap_contract4',
        name: 'reserved',
        status: 'creating',
        memoryBytes: 0,
        createdAt: iso(2000),
      });
      assert.deepEqual(
        (await listCreatingSnapshotsOfNode(database.db, 'node-a')).map((s) => s.id),
        [reserved.id],
      );
      const done = await completeSnapshot(database.db, reserved.id, {
        vcpuCount: 1,
        memoryMb: 256,
        diskSizeMb: 2048,
        memoryBytes: 9_000_000_000,
        diskBytes: 7,
        stateBytes: 8,
        pauseMs: 12.4,
        durationMs: 900,
      });
      assert.deepEqual([done?.status, done?.memoryBytes, done?.pauseMs, done?.vcpuCount], ['ready', 9_000_000_000, 12, 1]);
      assert.equal(
        await completeSnapshot(database.db, reserved.id, {
          vcpuCount: 1,
          memoryMb: 256,
          diskSizeMb: 1,
          memoryBytes: 1,
          diskBytes: 1,
          stateBytes: 1,
          pauseMs: 1,
          durationMs: 1,
        }),
        undefined,
        'only once',
      );
      assert.equal(await deleteSnapshotRow(database.db, reserved.id), true);
      assert.equal(await deleteSnapshotRow(database.db, child.id), true);
      assert.equal(await findChildSnapshot(database.db, snapshot.id), undefined);

      const template = {
        id: 'tpl_contract1',
        userId: ann.id,
        name: 'app',
        status: 'building' as const,
        ociImage: '127.0.0.1:5000/app:1',
        imageDigest: null,
        buildArgs: { gitCloneUrl: 'git://h/r.git', gitCloneBranch: null, envs: { A: 'b' }, postBuildCmd: 'make' },
        vcpuCount: 1,
        memoryMb: 512,
        nodeId: 'node-a',
        image: null,
        step: 'pull' as const,
        error: null,
        createdAt: iso(),
        updatedAt: iso(),
        readyAt: null,
      };
      assert.deepEqual(await insertTemplate(database.db, template), template);
      assert.deepEqual(
        (await listBuildingTemplatesOfNode(database.db, 'node-a')).map((t) => t.id),
        [template.id],
      );
      await appendTemplateLog(database.db, template.id, ['one', 'two'], iso());
      const log = await listTemplateLog(database.db, template.id, 0, 10);
      assert.deepEqual(
        log.map((l) => l.line),
        ['one', 'two'],
      );
      assert.deepEqual(
        (await listTemplateLog(database.db, template.id, log[0]!.id, 10)).map((l) => l.line),
        ['two'],
      );
      const image = {
        hash: 'h',
        kernelPath: '/k',
        initrdPath: '/i',
        rootfsPath: '/r',
        rootfsFormat: 'qcow2' as const,
        kernelArgs: ['x=1'],
        diskSizeMb: 1024,
        env: { P: '1' },
      };
      const ready = await updateBuildingTemplate(database.db, template.id, { status: 'ready', image, imageDigest: 'sha256:ab', step: null, readyAt: iso() });
      assert.deepEqual([ready?.status, ready?.image, ready?.imageDigest], ['ready', image, 'sha256:ab']);
      assert.equal(await updateBuildingTemplate(database.db, template.id, { status: 'failed' }), undefined, 'a finished build is not changed');
      assert.deepEqual(await findTemplateByName(database.db, ann.id, 'app'), ready);
      assert.deepEqual(
        (await listTemplates(database.db, ann.id, 10, 0)).map((t) => t.id),
        [template.id],
      );
      assert.equal(await deleteTemplateRow(database.db, template.id), true);
      assert.deepEqual(await listTemplateLog(database.db, template.id, 0, 10), [], 'the log goes with its template');
    });

    test('sessions, VMs and executions: records come back as written (JSON parsed, flags as booleans), transitions are conditional', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const session = await insertSession(database.db, {
        id: '00000000-0000-4000-8000-000000000001',
        userId: ann.id,
        vmLifetimeSeconds: 300,
        memoryMb: 512,
        vcpuCount: 1,
        metadata: { team: 'search', 'with "quotes"': 'ü' },
        env: { A: '1' },
        prewarm: true,
        currentVmId: null,
        createdAt: iso(),
        lastActivityAt: iso(),
        source: { kind: 'snapshot', id: 'snap_abc' },
        screen: { width: 1024, height: 768 },
        lifecycleHooks: { preStop: { command: "echo 'bye'", timeoutSeconds: 7 } },
        clientData: { template: 'base', ports: { public: true } },
        autoPauseSeconds: 600,
        onExpiry: 'pause' as const,
      });
      assert.deepEqual(await findSession(database.db, session.id), session);
      assert.deepEqual([session.metadata, session.env, session.prewarm], [{ team: 'search', 'with "quotes"': 'ü' }, { A: '1' }, true]);
      assert.deepEqual(await findSessionWithVm(database.db, session.id), { session, vm: undefined }, 'a session without a VM, read with its VM');
      assert.equal(await findSessionWithVm(database.db, '00000000-0000-4000-8000-0000000000ff'), undefined);

      const vm = (id: string, nodeId: string) =>
        insertVm(database.db, {
          id,
          userId: ann.id,
          sessionId: session.id,
          nodeId,
          status: 'active',
          endReason: null,
          vcpuCount: 1,
          memoryMb: 512,
          lifetimeSeconds: 300,
          templateId: 'snap1',
          ip: null,
          createdAt: iso(),
          startedAt: iso(),
          expiresAt: iso(300_000),
          endedAt: null,
          name: `name of ${id}`,
          metadata: { k: 'v' },
          baseSnapshotId: null,
          pausedAt: null,
          remainingSeconds: null,
          pythonContext: 'ctx-1',
          lifecycleHooks: nodeId === 'node-a' ? { preStop: { command: 'sync', timeoutSeconds: 30 } } : null,
          autoPauseSeconds: null,
          onExpiry: 'kill' as const,
          lastActivityAt: null,
        });
      await vm('vm-a', 'node-a');
      await vm('vm-b', 'node-b');
      assert.deepEqual((await findVm(database.db, 'vm-a'))?.lifecycleHooks, { preStop: { command: 'sync', timeoutSeconds: 30 } }, 'hooks come back as written');
      assert.equal((await findVm(database.db, 'vm-b'))?.lifecycleHooks, null);
      await updateSession(database.db, session.id, { currentVmId: 'vm-a' });
      assert.equal((await findSession(database.db, session.id))?.currentVmId, 'vm-a');
      // One query for the session and its current VM: both come back as their own reads give them.
      assert.deepEqual(await findSessionWithVm(database.db, session.id), {
        session: (await findSession(database.db, session.id))!,
        vm: (await findVm(database.db, 'vm-a'))!,
      });
      assert.deepEqual(
        (await listLiveVmsOfNode(database.db, 'node-a')).map((v) => v.id),
        ['vm-a'],
      );
      const ended = await transitionVm(database.db, 'vm-a', ['active'], { status: 'killed', endReason: 'agent_lost', endedAt: iso() });
      assert.deepEqual([ended?.status, ended?.endReason], ['killed', 'agent_lost']);
      assert.equal(await transitionVm(database.db, 'vm-a', ['active'], { status: 'killed', endReason: 'expired' }), undefined, 'only from the given statuses');
      assert.equal((await findVm(database.db, 'vm-a'))?.endReason, 'agent_lost');
      const paused = await transitionVm(database.db, 'vm-b', ['active'], {
        status: 'paused',
        pausedAt: iso(),
        remainingSeconds: 250,
        baseSnapshotId: 'snap_abc',
      });
      assert.deepEqual(
        [paused?.status, paused?.remainingSeconds, paused?.baseSnapshotId, paused?.name, paused?.metadata],
        ['paused', 250, 'snap_abc', 'name of vm-b', { k: 'v' }],
      );
      assert.equal((await snapshotInUseByVm(database.db, 'snap_abc'))?.id, 'vm-b', 'a paused VM still builds on its snapshot');
      assert.deepEqual(
        (await listLiveVmsOfNode(database.db, 'node-b')).map((v) => v.id),
        [],
        'a paused VM is not live',
      );
      await transitionVm(database.db, 'vm-b', ['paused'], { status: 'active', pausedAt: null, remainingSeconds: null });

      // Sessions by their current VM's status, newest first, in pages (the E2B facade's list): vm-b is current now.
      await updateSession(database.db, session.id, { currentVmId: 'vm-b' });
      const listed = await listSessionsWithVm(database.db, ann.id, { vmStatuses: ['active', 'paused'], limit: 10 });
      assert.deepEqual(
        listed.map((entry) => [entry.session.id, entry.vm.id, entry.vm.status]),
        [[session.id, 'vm-b', 'active']],
      );
      assert.deepEqual(await listSessionsWithVm(database.db, ann.id, { vmStatuses: ['paused'], limit: 10 }), [], 'filtered by the VM status');
      assert.deepEqual(
        await listSessionsWithVm(database.db, ann.id, { vmStatuses: ['active'], after: { createdAt: session.createdAt, id: session.id }, limit: 10 }),
        [],
        'a page starts after the position it is given',
      );
      assert.deepEqual(
        await listSessionsWithVm(database.db, ann.id + 1000, { vmStatuses: ['active'], limit: 10 }),
        [],
        "another user's sessions are not listed",
      );

      const run = (vmId: string | null, nodeId: string | null, status: NewExecution['status']) =>
        insertExecution(database.db, {
          userId: ann.id,
          sessionId: session.id,
          vmId,
          nodeId,
          mode: 'async',
          trigger: 'request',
          language: 'python',
          source: 'x',
          status,
          exitCode: null,
          error: null,
          stdout: '',
          stderr: '',
          stdoutTruncated: false,
          stderrTruncated: true,
          createdAt: iso(),
          startedAt: null,
          completedAt: null,
          executionTime: null,
          cpuTime: null,
          results: [],
          exception: null,
          contextId: null,
        });
      const queuedA = await run(null, 'node-a', 'queued');
      const runningA = await run('vm-a', 'node-a', 'running');
      const doneA = await run('vm-a', 'node-a', 'completed');
      const runningB = await run('vm-b', 'node-b', 'running');
      assert.equal(runningA.stderrTruncated, true);
      const failedOfNode = await failInFlightExecutions(database.db, { nodeId: 'node-a' }, 'the server stopped', iso());
      assert.deepEqual(failedOfNode.map((e) => e.id).sort(), [queuedA.id, runningA.id].sort(), "only node-a's in-flight runs");
      assert.ok(failedOfNode.every((e) => e.status === 'failed' && e.error === 'the server stopped' && e.completedAt !== null));
      assert.equal((await findExecution(database.db, ann.id, doneA.id))?.status, 'completed', 'final records stay');
      assert.equal((await findExecution(database.db, ann.id, runningB.id))?.status, 'running', "another node's run stays");
      assert.deepEqual(
        (await failInFlightExecutions(database.db, { vmId: 'vm-b' }, 'the VM ended', iso())).map((e) => e.id),
        [runningB.id],
      );
      assert.equal(
        await updateExecution(database.db, runningA.id, { status: 'completed', exitCode: 0 }, ['queued', 'running']),
        undefined,
        'a late result does not overwrite a record that was ended',
      );
      assert.equal((await findExecution(database.db, ann.id, runningA.id))?.status, 'failed');
    });

    test('daily usage: executions counted and their CPU time summed per UTC day by the store', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const at = (time: string, cpuTime: number | null) =>
        insertExecution(database.db, {
          userId: ann.id,
          sessionId: '00000000-0000-4000-8000-000000000001',
          vmId: null,
          nodeId: null,
          mode: 'sync',
          trigger: 'request',
          language: 'bash',
          source: 'x',
          status: 'completed',
          exitCode: 0,
          error: null,
          stdout: '',
          stderr: '',
          stdoutTruncated: false,
          stderrTruncated: false,
          createdAt: time,
          startedAt: null,
          completedAt: null,
          executionTime: null,
          cpuTime,
          results: [{ text: '<Figure>', png: 'iVBORw0KGgo=', json: { a: [1, 2] }, isMainResult: false }],
          exception: { name: 'ValueError', value: 'bad', traceback: 'Traceback ...' },
          contextId: null,
        });
      const first = await at('2030-01-01T23:59:59.000Z', 0.25);
      assert.deepEqual(
        (({ results, exception, contextId }) => ({ results, exception, contextId }))((await findExecution(database.db, ann.id, first.id))!),
        {
          results: [{ text: '<Figure>', png: 'iVBORw0KGgo=', json: { a: [1, 2] }, isMainResult: false }],
          exception: { name: 'ValueError', value: 'bad', traceback: 'Traceback ...' },
          contextId: null,
        },
        'rich results and the exception are kept as they were written',
      );
      await at('2030-01-02T00:00:00.000Z', 1.5);
      await at('2030-01-02T12:00:00.000Z', null);
      await at('2030-01-02T13:00:00.000Z', 0.75);
      const days = await executionsPerDaySince(database.db, ann.id, '2030-01-01T12:00:00.000Z');
      assert.deepEqual(
        [...days].sort((a, b) => a.day.localeCompare(b.day)),
        [
          { day: '2030-01-01', executions: 1, cpu_seconds: 0.25 },
          { day: '2030-01-02', executions: 3, cpu_seconds: 2.25 },
        ],
      );
      assert.deepEqual(await executionsPerDaySince(database.db, ann.id + 1000, '2030-01-01T00:00:00.000Z'), []);
    });

    test('daily usage: egress attempts, refusals and bytes, and vault swaps and flags, per UTC day by the store', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const attempt = (at: string, verdict: 'allowed' | 'refused', sent: number | null, received: number | null) => ({
        vm_id: 'vm-usage',
        user_id: ann.id,
        at,
        protocol: 'tcp',
        scheme: 'https',
        name: 'a.test',
        address: '203.0.113.1',
        port: 443,
        bytes_sent: sent,
        bytes_received: received,
        verdict,
        reason: null,
      });
      await insertEgressLog(database.db, [
        attempt('2031-03-01T23:59:59.000Z', 'allowed', 100, 5_000_000_000),
        attempt('2031-03-02T00:00:00.000Z', 'refused', null, null),
        attempt('2031-03-02T10:00:00.000Z', 'allowed', 7, 9),
        { ...attempt('2031-03-02T11:00:00.000Z', 'allowed', 1, 1), user_id: ann.id + 1000 },
      ]);
      const egress = await egressPerDaySince(database.db, ann.id, '2031-03-01T00:00:00.000Z');
      assert.deepEqual(
        [...egress].sort((a, b) => a.day.localeCompare(b.day)),
        [
          { day: '2031-03-01', attempts: 1, refused: 0, bytes_sent: 100, bytes_received: 5_000_000_000 },
          { day: '2031-03-02', attempts: 2, refused: 1, bytes_sent: 7, bytes_received: 9 },
        ],
      );
      const use = (at: string, outcome: 'substituted' | 'flagged') => ({
        vault_id: 'vlt_usage',
        user_id: ann.id,
        secret_name: 'K',
        session_id: 's',
        vm_id: 'vm-usage',
        at,
        outcome,
        scheme: 'https',
        host: 'a.test',
        method: 'GET',
        path: '/',
        status: 200,
        detail: null,
      });
      await insertVaultRequestLogs(database.db, [
        use('2031-03-01T10:00:00.000Z', 'substituted'),
        use('2031-03-02T10:00:00.000Z', 'substituted'),
        use('2031-03-02T11:00:00.000Z', 'flagged'),
        use('2031-03-02T12:00:00.000Z', 'substituted'),
      ]);
      const vault = await vaultUsePerDaySince(database.db, ann.id, '2031-03-02T00:00:00.000Z');
      assert.deepEqual(vault, [{ day: '2031-03-02', substituted: 2, flagged: 1 }]);
    });

    test('volumes: names unique per user, sizes summed, attachments open while their VM has not ended and gone with their volume', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const volume = { id: 'vol_contract1', userId: ann.id, name: 'data', sizeMb: 1024, nodeId: 'node-a', inStore: false, createdAt: iso() };
      assert.deepEqual(await insertVolume(database.db, volume), volume);
      const second = await insertVolume(database.db, { ...volume, id: 'vol_contract2', name: 'more', sizeMb: 64, createdAt: iso(1000) });
      await assert.rejects(insertVolume(database.db, { ...volume, id: 'vol_contract3' }), (error) => isUniqueViolation(error));
      assert.deepEqual(await findVolume(database.db, volume.id), volume);
      assert.deepEqual(
        (await listVolumes(database.db, ann.id, 10, 0)).map((v) => v.id),
        [second.id, volume.id],
      );
      assert.equal(await totalVolumeMb(database.db, ann.id), 1088);
      assert.equal(await totalVolumeMb(database.db, ann.id + 1000), 0);
      // vm-a ended in the test above; vm-b is active.
      await insertVolumeAttachment(database.db, { volumeId: volume.id, vmId: 'vm-a', slot: 0, mountPath: '/data', readOnly: false, createdAt: iso() });
      assert.deepEqual(await openAttachments(database.db, [volume.id]), [], "an ended VM's attachment is history");
      const open = { volumeId: volume.id, vmId: 'vm-b', slot: 1, mountPath: '/mnt/in', readOnly: true, createdAt: iso(2000) };
      await insertVolumeAttachment(database.db, open);
      assert.deepEqual(await openAttachments(database.db, [volume.id, second.id]), [open]);
      assert.equal((await vmAttachments(database.db, 'vm-b')).length, 1);
      assert.deepEqual(await vmAttachments(database.db, 'vm-b'), [open], "a VM's attachments, in slot order");
      // A session's volumes (what its next VMs mount): replaced as a whole, in slot order, gone with their volume.
      const sessionId = '00000000-0000-4000-8000-000000000001';
      const mounts = [
        { volumeId: second.id, mountPath: '/b', readOnly: false },
        { volumeId: volume.id, mountPath: '/a', readOnly: true },
      ];
      await replaceSessionVolumes(database.db, sessionId, mounts);
      assert.deepEqual(await findSessionVolumes(database.db, sessionId), mounts);
      await replaceSessionVolumes(database.db, sessionId, [mounts[1]!, mounts[0]!]);
      assert.deepEqual(await findSessionVolumes(database.db, sessionId), [mounts[1], mounts[0]]);
      assert.equal(await deleteVolumeRow(database.db, volume.id), true);
      assert.equal((await vmAttachments(database.db, 'vm-b')).length, 0, 'attachments go with their volume');
      assert.deepEqual(await findSessionVolumes(database.db, sessionId), [mounts[0]], "a deleted volume leaves its sessions' lists");
      await replaceSessionVolumes(database.db, sessionId, []);
      assert.deepEqual(await findSessionVolumes(database.db, sessionId), []);
      assert.equal(await deleteVolumeRow(database.db, second.id), true);
      assert.equal(await deleteVolumeRow(database.db, second.id), false);
    });

    test('networks: names and CIDRs unique per user, members while their VM has not ended, gone with their network', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const network = { id: 'net-contract1', userId: ann.id, name: 'lan', cidr: '10.250.0.0/24', createdAt: iso() };
      await insertNetwork(database.db, network);
      await assert.rejects(insertNetwork(database.db, { ...network, id: 'net-contract2', cidr: '10.250.1.0/24' }), (error) => isUniqueViolation(error));
      await assert.rejects(insertNetwork(database.db, { ...network, id: 'net-contract3', name: 'other' }), (error) => isUniqueViolation(error));
      assert.deepEqual(await findNetwork(database.db, network.id), network);
      assert.deepEqual(await findNetworkByName(database.db, ann.id, 'lan'), network);
      assert.deepEqual(await listNetworks(database.db, ann.id), [network]);
      assert.deepEqual(await networkCidrs(database.db, ann.id), ['10.250.0.0/24']);
      // vm-a ended in a test above; vm-b is active.
      await insertNetworkMember(database.db, { networkId: network.id, vmId: 'vm-a', address: '10.250.0.2', joinedAt: iso() });
      await insertNetworkMember(database.db, { networkId: network.id, vmId: 'vm-b', address: '10.250.0.3', joinedAt: iso(1000) });
      await assert.rejects(
        insertNetworkMember(database.db, { networkId: network.id, vmId: 'vm-c', address: '10.250.0.3', joinedAt: iso() }),
        (error) => isUniqueViolation(error) || /FOREIGN KEY|foreign key/i.test(String(error)),
      );
      assert.deepEqual(
        (await listNetworkMembers(database.db, network.id)).map((m) => [m.vmId, m.address]),
        [['vm-b', '10.250.0.3']],
        'an ended VM is no member',
      );
      assert.equal(await findMemberByAddress(database.db, network.id, '10.250.0.2'), undefined);
      assert.equal((await findMemberByAddress(database.db, network.id, '10.250.0.3'))?.vmId, 'vm-b');
      assert.deepEqual(await vmsOnNetworks(database.db, ['vm-b', 'vm-z']), ['vm-b']);
      await pruneEndedMembers(database.db, network.id);
      assert.deepEqual(await takenAddresses(database.db, network.id), ['10.250.0.3'], "an ended VM's address is free again");
      assert.deepEqual(
        (await networksOfVm(database.db, 'vm-b')).map((n) => [n.network.id, n.address]),
        [[network.id, '10.250.0.3']],
      );
      const sessionId = '00000000-0000-4000-8000-000000000001';
      await addSessionNetwork(database.db, sessionId, network.id);
      await addSessionNetwork(database.db, sessionId, network.id);
      assert.deepEqual(await sessionNetworkIds(database.db, sessionId), [network.id]);
      assert.equal(await deleteNetworkMember(database.db, network.id, 'vm-b'), true);
      assert.equal(await deleteNetworkMember(database.db, network.id, 'vm-b'), false);
      await insertNetworkMember(database.db, { networkId: network.id, vmId: 'vm-b', address: '10.250.0.2', joinedAt: iso() });
      assert.equal(await deleteNetworkRow(database.db, network.id), true);
      assert.deepEqual(await networksOfVm(database.db, 'vm-b'), [], 'members go with their network');
      assert.deepEqual(await sessionNetworkIds(database.db, sessionId), [], "and the sessions' lists");
      assert.equal(await deleteNetworkRow(database.db, network.id), false);
    });

    test('custom domains: one verified claim per domain, one open claim per user and domain, checks leased to one checker', async () => {
      const ann = (await findUserByUsername(database.db, 'ann'))!;
      const bea = await insertUser(database.db, { username: 'bea', passwordHash: 'h', plan: 'free', isAdmin: false, createdAt: iso() });
      const sessionOf = async (id: string, userId: number) =>
        insertSession(database.db, {
          id,
          userId,
          vmLifetimeSeconds: 300,
          memoryMb: 512,
          vcpuCount: 1,
          metadata: {},
          env: {},
          prewarm: false,
          currentVmId: null,
          createdAt: iso(),
          lastActivityAt: iso(),
          source: { kind: 'template', id: 'default' },
          screen: null,
          lifecycleHooks: null,
          clientData: null,
          autoPauseSeconds: null,
          onExpiry: 'kill' as const,
        });
      await sessionOf('00000000-0000-4000-8000-00000000000a', ann.id);
      await sessionOf('00000000-0000-4000-8000-00000000000b', bea.id);
      const claim = (id: string, userId: number, sessionId: string): CustomDomain => ({
        id,
        userId,
        domain: 'contract.example.com',
        shareId: null,
        sessionId,
        port: 80,
        appId: null,
        dnsProvider: 'manual',
        verificationToken: `token-${id}`,
        status: 'pending',
        failureReason: null,
        createdAt: iso(),
        expiresAt: iso(86_400_000),
        verifiedAt: null,
        lastCheckedAt: null,
        lastError: null,
        nextCheckAt: iso(-1000),
        recordSeenAt: null,
        missedChecks: 0,
      });
      const annClaim = await insertCustomDomain(database.db, claim('cd_ann', ann.id, '00000000-0000-4000-8000-00000000000a'));
      assert.deepEqual(await findCustomDomain(database.db, 'cd_ann'), annClaim);
      await insertCustomDomain(database.db, claim('cd_bea', bea.id, '00000000-0000-4000-8000-00000000000b'));
      await assert.rejects(
        insertCustomDomain(database.db, claim('cd_ann2', ann.id, '00000000-0000-4000-8000-00000000000a')),
        (error) => isUniqueViolation(error),
        'one open claim per user',
      );

      // Two checkers race for one due claim: exactly one gets it; the outcome is written only by the holder.
      assert.deepEqual((await listDueChecks(database.db, iso(), 10)).map((c) => c.id).sort(), ['cd_ann', 'cd_bea']);
      const wins = await Promise.all([
        claimCheck(database.db, 'cd_ann', iso(), iso(60_000), 'one'),
        claimCheck(database.db, 'cd_ann', iso(), iso(60_000), 'two'),
      ]);
      assert.deepEqual(wins.sort(), [false, true]);
      const holder = (await database.db.selectFrom('custom_domains').select('check_lease_owner').where('id', '=', 'cd_ann').executeTakeFirstOrThrow())
        .check_lease_owner!;
      const other = holder === 'one' ? 'two' : 'one';
      assert.deepEqual(
        (await listDueChecks(database.db, iso(), 10)).map((c) => c.id),
        ['cd_bea'],
        'a leased claim is not due',
      );
      assert.equal(await recordFailedCheck(database.db, 'cd_ann', { now: iso(), error: 'no record', nextCheckAt: iso(60_000) }, other), false);
      assert.equal(await recordFailedCheck(database.db, 'cd_ann', { now: iso(), error: 'no record', nextCheckAt: iso(60_000) }, holder), true);
      assert.equal((await findCustomDomain(database.db, 'cd_ann'))?.lastError, 'no record');
      assert.equal(await nextCheckDue(database.db, iso()), (await findCustomDomain(database.db, 'cd_bea'))?.nextCheckAt);

      // Both claims are pending; the first verified wins and the second cannot be verified.
      const reverifyDue = iso(-500);
      const verified = await markVerified(database.db, 'cd_bea', iso(), reverifyDue);
      assert.deepEqual([verified?.status, verified?.nextCheckAt, verified?.missedChecks], ['verified', reverifyDue, 0]);
      assert.equal(verified?.recordSeenAt, verified?.verifiedAt);
      await assert.rejects(markVerified(database.db, 'cd_ann', iso(), iso(60_000)), (error) => isUniqueViolation(error), 'one verified claim per domain');
      assert.equal((await findCustomDomain(database.db, 'cd_ann'))?.status, 'pending');
      assert.equal(await markVerified(database.db, 'cd_bea', iso(), iso(60_000)), undefined, 'only from pending');
      const failed = await failPendingClaims(
        database.db,
        { domain: 'contract.example.com', exceptId: 'cd_bea' },
        { reason: 'verified_elsewhere', message: 'lost', now: iso() },
      );
      assert.deepEqual(
        failed.map((c) => [c.id, c.status, c.failureReason, c.nextCheckAt]),
        [['cd_ann', 'failed', 'verified_elsewhere', null]],
      );
      assert.deepEqual(await listVerifiedDomainNames(database.db), ['contract.example.com']);

      // A verified claim is re-checked through the same leases: misses count up, a find resets them.
      assert.deepEqual(
        (await listDueChecks(database.db, iso(), 10)).map((c) => c.id),
        ['cd_bea'],
        'a verified claim falls due for its re-check',
      );
      assert.equal(await claimCheck(database.db, 'cd_bea', iso(), iso(60_000), 'three'), true);
      assert.equal(
        await recordMissedReverify(database.db, 'cd_bea', { now: iso(), error: 'gone', nextCheckAt: iso(-100) }, 'four'),
        undefined,
        'only by the lease holder',
      );
      const missed = await recordMissedReverify(database.db, 'cd_bea', { now: iso(), error: 'gone', nextCheckAt: iso(-100) }, 'three');
      assert.deepEqual([missed?.missedChecks, missed?.lastError, missed?.status], [1, 'gone', 'verified']);
      assert.equal(await claimCheck(database.db, 'cd_bea', iso(), iso(60_000), 'five'), true);
      const nextReverify = iso(3_600_000);
      assert.equal(await recordReverified(database.db, 'cd_bea', { now: iso(), nextCheckAt: nextReverify }, 'five'), true);
      const seen = await findCustomDomain(database.db, 'cd_bea');
      assert.deepEqual([seen?.missedChecks, seen?.lastError, seen?.nextCheckAt], [0, null, nextReverify]);
      const lost = await failVerifiedClaim(database.db, 'cd_bea', { reason: 'record_missing', message: 'record gone', now: iso() });
      assert.deepEqual([lost?.status, lost?.failureReason, lost?.nextCheckAt], ['failed', 'record_missing', null]);
      assert.equal(await failVerifiedClaim(database.db, 'cd_bea', { reason: 'record_missing', message: 'again', now: iso() }), undefined, 'only from verified');
      assert.deepEqual(await listVerifiedDomainNames(database.db), []);
      // A failed claim no longer blocks a new one of the same user.
      await insertCustomDomain(database.db, claim('cd_ann3', ann.id, '00000000-0000-4000-8000-00000000000a'));
    });

    test('transactions roll back on error', async () => {
      await assert.rejects(
        database.db.transaction().execute(async (trx) => {
          await insertUser(trx, { username: 'ghost', passwordHash: 'h', plan: 'free', isAdmin: false, createdAt: iso() });
          throw new Error('boom');
        }),
        /boom/,
      );
      assert.equal(await findUserByUsername(database.db, 'ghost'), undefined);
    });
  });
}
