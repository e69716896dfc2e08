/**
 * POST /v1/vms: start a VM, from the built-in image, a template or a snapshot, bound to a session (a new one
 * when none is given). With `?wait=false` it answers 202 as soon as the VM is reserved ('starting').
 */
import { EgressPolicyRef, toEgressPolicy } from '../egress/schemas.ts';
import { Type } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import type { Vm } from '../../../model.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import {
  AutoPauseSeconds,
  LifecycleHooksRef,
  LifetimeSeconds,
  OnExpirySchema,
  MemoryMb,
  Metadata,
  SourceFields,
  toLifecycleHooks,
  toVmRecord,
  VcpuCount,
} from '../sessions/schemas.ts';
import { VaultIds } from '../vaults/schemas.ts';
import { VolumeMounts } from '../volumes/schemas.ts';
import { NetworkRefs } from '../networks/schemas.ts';

const VmCreateRequest = Type.Object({
  session_id: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, description: 'Bind the VM to this session of yours (it must have no running VM); default: a new session' }),
  ),
  vm_lifetime_seconds: Type.Optional(LifetimeSeconds),
  memory_mb: Type.Optional(MemoryMb),
  vcpu_count: Type.Optional(VcpuCount),
  ...SourceFields,
  snapshot_name: Type.Optional(Type.Unknown({ description: 'Older name of `snapshot`' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'A name for the VM (not unique)' })),
  metadata: Type.Optional(Metadata('User-defined key/value pairs of the VM (and of the new session, when one is made)')),
  image: Type.Optional(Type.Unknown({ description: 'Alternate image: build a template from it (POST /v1/templates) and pass `template`' })),
  volumes: Type.Optional(VolumeMounts),
  networks: Type.Optional(NetworkRefs),
  lifecycle_hooks: Type.Optional(LifecycleHooksRef),
  egress_policy: Type.Optional(EgressPolicyRef),
  vault_ids: Type.Optional(VaultIds),
  auto_pause: Type.Optional({
    ...AutoPauseSeconds,
    description:
      "Pause the VM after this many seconds of idleness (10 to 2592000; null: never); default: the session's. The next request that needs it resumes it",
  }),
  on_expiry: Type.Optional({
    ...OnExpirySchema,
    description: "`kill`: killed when its lifetime ends; `pause`: paused instead (resumed by its next use); default: the session's",
  }),
  api_key: Type.Optional(Type.String()),
});

export function registerCreateVm(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/v1/vms',
    {
      schema: {
        tags: ['vms'],
        summary: 'Start a VM',
        description:
          "Starts a VM with the given lifetime, memory and vCPUs (defaults: the session's), from the built-in image, or from your `template` or `snapshot` (by name; a snapshot brings its memory, processes and disk, and fixes vCPUs and memory). " +
          "It is bound to `session_id` (which must have no running VM: 409) or to a new session with the VM's metadata. `volumes` mounts your persistent volumes (a VM with volumes is restored for the purpose, so it starts slower than one from the warm pool) and makes them the session's: its next VMs (after this one is killed, expires or crashes) mount the same volumes at the same paths; left out, the VM mounts the session's volumes, if it has any. `?wait=false` answers 202 as soon as the VM is reserved (status `starting`); poll `GET /v1/vms/{vm_id}`. " +
          "`egress_policy` (default: the session's, else SANDBOXD_EGRESS_DEFAULT) is what the VM may reach; see `PUT /v1/vms/{vm_id}/egress`. " +
          "`vault_ids` attaches your vaults to the VM's session (added to those it has): each secret is an environment variable holding a placeholder, swapped for the value only at the secret's injection point in HTTPS requests to its hosts (see POST /v1/vaults). " +
          '`lifecycle_hooks.pre_stop` (default: the session\'s) is a bash command run in the VM before it is killed, paused or reaches the end of its lifetime, for up to `timeout_seconds` (1 to 120, default 30); its output is kept as an execution record with `trigger: "pre_stop"`. It does not run when the VM crashed or its agent or node was lost. ' +
          "`networks` (names or ids of your private networks) are joined by the VM at start and become the session's (its next VMs join them too); see POST /v1/networks. " +
          "`auto_pause` and `on_expiry` (default: the session's) pause the VM after that many idle seconds, or at the end of its lifetime instead of killing it; the next request that needs it resumes it.",
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          wait: Type.Boolean({ default: true, description: 'Answer once the VM runs (default); false: at once, with the VM starting' }),
        }),
        body: VmCreateRequest,
        response: authedResponses(
          { 200: Type.Ref('VmRecord'), 202: Type.Ref('VmRecord') },
          {
            400: 'Two attached vaults naming one variable, or the session env setting it',
            404: 'No such session, snapshot, template, volume, vault or network among yours',
            409: 'The session already has a running or paused VM, the template is not ready, or a volume is mounted read-write by another VM (or read-only, for a read-write mount)',
            429: 'Plan quota exceeded',
            503: 'The VM could not start, or its snapshot or template is on another node, or vault_ids on a node without the vault key (VAULT_KEY_UNAVAILABLE)',
            507: 'The server is low on disk space (HOST_STORAGE_LOW); no VM was started',
          },
        ),
      },
      ...requireAuthOrBodyKey,
    },
    async (request, reply) => {
      const { body } = request;
      if (body.image !== undefined && body.image !== null)
        throw new AppError('BAD_REQUEST', 'build a template from the image first (POST /v1/templates), then pass its name as "template"');
      const principal = principalOf(request);
      const { sandbox } = services;
      const egressPolicy = body.egress_policy ? sandbox.egress.normalize(toEgressPolicy(body.egress_policy)) : undefined;
      const name = body.snapshot ?? body.template ?? (typeof body.snapshot_name === 'string' ? body.snapshot_name : undefined);
      const resolved = name === undefined ? undefined : await sandbox.sources.resolve(principal.userId, await sandbox.sources.byName(principal.userId, name));
      if (body.vault_ids?.length) sandbox.egress.requireEnforcement('vault_ids');
      const networks = await sandbox.networks.resolve(principal, body.networks ?? []);
      const existing = body.session_id ? await sandbox.sessions.getOwned(principal, body.session_id) : undefined;
      // A new session gets the placeholders in its env; an existing one has them added (no VM of it runs: 409 otherwise).
      const vaults = existing ? null : await services.vaults.prepareAttachment(principal.userId, body.vault_ids ?? [], {});
      const created = existing
        ? existing
        : await sandbox.sessions.create(principal, {
            vmLifetimeSeconds: body.vm_lifetime_seconds,
            memoryMb: resolved?.shape?.memoryMb ?? body.memory_mb,
            vcpuCount: resolved?.shape?.vcpuCount ?? body.vcpu_count,
            metadata: body.metadata,
            ...(resolved ? { source: resolved.ref } : {}),
            ...(body.auto_pause !== undefined ? { autoPauseSeconds: body.auto_pause } : {}),
            ...(body.on_expiry !== undefined ? { onExpiry: body.on_expiry } : {}),
            ...(vaults && body.vault_ids?.length ? { env: vaults.env } : {}),
          });
      if (vaults) await services.vaults.recordAttachment(services.database.db, created.id, vaults);
      // Checked before the vaults are added, so that a 409 leaves the session as it was.
      if (existing && body.vault_ids?.length) await sandbox.vms.checkCanStart(existing);
      const session = existing && body.vault_ids?.length ? await services.vaults.attachToSession(existing, body.vault_ids) : created;
      // Before the VM starts: it joins its session's networks while it is restored (the network hook).
      await sandbox.networks.attachToSession(session.id, networks);
      let reserved: (vm: Vm) => void = () => {};
      const reservation = new Promise<Vm>((resolve) => (reserved = resolve));
      const started = sandbox.vms.createForSession(principal, session, {
        vcpuCount: body.vcpu_count ?? session.vcpuCount,
        memoryMb: body.memory_mb ?? session.memoryMb,
        lifetimeSeconds: body.vm_lifetime_seconds ?? session.vmLifetimeSeconds,
        ...(resolved ? { source: resolved } : {}),
        name: body.name ?? null,
        metadata: body.metadata ?? {},
        // Given, they become the session's (its next VMs mount them); left out, the VM mounts the session's own.
        ...(body.volumes
          ? { volumes: body.volumes.map((volume) => ({ volumeId: volume.volume_id, mountPath: volume.mount_path, readOnly: volume.read_only })) }
          : {}),
        ...(body.lifecycle_hooks !== undefined ? { lifecycleHooks: toLifecycleHooks(body.lifecycle_hooks) } : {}),
        ...(body.auto_pause !== undefined ? { autoPauseSeconds: body.auto_pause } : {}),
        ...(body.on_expiry !== undefined ? { onExpiry: body.on_expiry } : {}),
        // Stored with the reservation (on whichever node starts the VM); the egress network hook applies it while the
        // restored VM is still paused, so it holds from the VM's first instruction. Without one: its session's.
        ...(egressPolicy ? { egressPolicy } : {}),
        onReserved: (vm) => reserved(vm),
      });
      if (request.query.wait) return toVmRecord((await started).vm, services.clock.now());
      // Answer once reserved (or at the refusal); the start goes on and records its outcome.
      started.catch((error: unknown) => request.log.warn({ err: error, 'session.id': session.id }, 'a VM started with wait=false did not come up'));
      const vm = await Promise.race([reservation, started.then((live) => live.vm)]);
      reply.code(vm.status === 'starting' ? 202 : 200);
      return toVmRecord(vm, services.clock.now());
    },
  );
}
