/** POST /v1/sessions/session (deprecated but fully working): create a session; with prewarm, start its VM now. */
import { toEgressPolicy } from '../egress/schemas.ts';
import { Type } from 'typebox';
import { DESKTOP_DEFAULT_SCREEN } from '../../../core/computer-use/desktop.ts';
import { badRequest } from '../../../core/errors.ts';
import { DESKTOP_TEMPLATE_ID } from '../../../model.ts';
import { VmSources } from '../../../core/vm-sources.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toLifecycleHooks, toSessionCreateResponse, type SessionCreateBody, type SessionCreateRequest } from './schemas.ts';

export function registerCreateSession(app: App, { services, requireAuthOrBodyKey }: RouteContext): void {
  app.post(
    '/v1/sessions/session',
    {
      schema: {
        tags: ['sessions'],
        summary: 'Create a session',
        deprecated: true,
        description:
          'Creates a session; its VM is acquired on the first execute or `POST /v1/vms`, or at once in the background with `prewarm: true`. ' +
          '`env` applies to every execution of the session. The body is optional: every field has a default. ' +
          '`snapshot` or `template` (a name) makes its VMs start from your snapshot or template instead of the built-in image; a snapshot also sets vCPUs and memory (those fields are then ignored). ' +
          '`egress_policy` (see `PUT /v1/sessions/{session_id}/egress`) is what its VMs may reach; default SANDBOXD_EGRESS_DEFAULT. ' +
          "`vault_ids` attaches your vaults: each secret is an environment variable of the session holding a placeholder, swapped for the value only at the secret's injection point in HTTPS requests to its hosts (see POST /v1/vaults). " +
          '`lifecycle_hooks` (e.g. `{"pre_stop": {"command": "sync", "timeout_seconds": 10}}`) is inherited by every VM of the session: the pre-stop command runs in the VM before a kill, a pause or the end of its lifetime, and its output is kept as an execution record (`trigger: "pre_stop"`). ' +
          '`auto_pause` (seconds of idleness, null: never) pauses its VMs when nothing uses them for that long, and the next request of any kind that needs the VM resumes it (its answer carries `Sandboxd-Resumed: <ms>`); `on_expiry: "pause"` pauses a VM at the end of its lifetime instead of killing it. Paused VMs are kept for your plan\'s retention, then deleted. ' +
          '`networks` (names or ids of your private networks, see POST /v1/networks) are joined by each VM of the session when it starts. ' +
          '`"template": "desktop"` makes a desktop session for computer use (an X desktop with VNC, a terminal and Chromium; vCPUs and memory fixed by SANDBOXD_DESKTOP_VCPUS and SANDBOXD_DESKTOP_MEMORY_MB; screen size from `screen_width` × `screen_height`, default 1280×800): drive it through `/v1/computeruse/{session_id}/…`.',
        security: BEARER_OR_API_KEY,
        body: Type.Union([Type.Ref('SessionCreateRequest'), Type.Null()]) as unknown as typeof SessionCreateRequest,
        response: authedResponses(
          { 200: Type.Ref('SessionCreateResponse') },
          {
            400: 'A screen size for a session that is not a desktop session, or two attached vaults (or env) naming one variable',
            404: 'No snapshot, template or vault of that name or id among yours',
            409: 'The template is not ready',
            503: 'The snapshot or template is on another node, or vault_ids on a server without egress enforcement or on a node without the vault key (VAULT_KEY_UNAVAILABLE)',
          },
        ),
      },
      ...requireAuthOrBodyKey,
    },
    async (request) => {
      const principal = principalOf(request);
      const body: SessionCreateBody = request.body ?? {};
      const name = body.snapshot ?? body.template;
      const source = name === undefined ? undefined : await services.sandbox.sources.byName(principal.userId, name);
      // A snapshot fixes vCPUs and memory; a template must be ready to start VMs. Both checked now, not at first use.
      const desktop = source !== undefined && VmSources.isBuiltin(source, DESKTOP_TEMPLATE_ID);
      if ((body.screen_width !== undefined || body.screen_height !== undefined) && !desktop) {
        throw badRequest(`screen_width and screen_height apply to desktop sessions only: add "template": "${DESKTOP_TEMPLATE_ID}"`);
      }
      const resolved = source && (await services.sandbox.sources.resolve(principal.userId, source));
      const egressPolicy = body.egress_policy ? services.sandbox.egress.normalize(toEgressPolicy(body.egress_policy)) : undefined;
      if (body.vault_ids?.length) services.sandbox.egress.requireEnforcement('vault_ids');
      // Placeholders are made (and the vaults checked) before the session exists: a refusal leaves nothing behind.
      const vaults = await services.vaults.prepareAttachment(principal.userId, body.vault_ids ?? [], body.env ?? {});
      const networks = await services.sandbox.networks.resolve(principal, body.networks ?? []);
      const session = await services.sandbox.sessions.create(principal, {
        ...(source ? { source } : {}),
        ...(resolved?.shape ?? {}),
        vmLifetimeSeconds: body.vm_lifetime_seconds,
        ...(resolved?.shape ? {} : { memoryMb: body.memory_mb, vcpuCount: body.vcpu_count }),
        metadata: body.metadata,
        env: body.vault_ids?.length ? { ...body.env, ...vaults.env } : body.env,
        prewarm: body.prewarm,
        lifecycleHooks: toLifecycleHooks(body.lifecycle_hooks),
        autoPauseSeconds: body.auto_pause ?? null,
        onExpiry: body.on_expiry ?? 'kill',
        ...(desktop
          ? { screen: { width: body.screen_width ?? DESKTOP_DEFAULT_SCREEN.width, height: body.screen_height ?? DESKTOP_DEFAULT_SCREEN.height } }
          : {}),
      });
      // Before any VM of the session can start (prewarm below).
      await services.vaults.recordAttachment(services.database.db, session.id, vaults);
      await services.sandbox.networks.attachToSession(session.id, networks);
      if (egressPolicy) await services.sandbox.egress.setInitialSessionPolicy(session, egressPolicy);
      if (session.prewarm) {
        services.sandbox.vms.ensureVm(principal, session).catch((error: unknown) => {
          request.log.warn({ err: error, 'session.id': session.id }, 'prewarm failed; the first execute will try again');
        });
      }
      return toSessionCreateResponse(session, session.prewarm, await services.sandbox.sources.summary(session.source));
    },
  );
}
