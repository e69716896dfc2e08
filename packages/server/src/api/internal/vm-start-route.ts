/**
 * POST /internal/v1/vms/start: another node placed a session's new VM on this one (core/cluster/placement.ts).
 * Served on the internal listener only, whose hooks (signed-request.ts) admit only a request signed for this
 * node, body included; it carries the principal the sending node authenticated, which this node trusts because
 * the whole body (principal, session, spec and its hooks) is signed. The VM is acquired here exactly as a local
 * one (quota in the shared store, reservation, restore, events, ready hooks); the answer is its id once it is
 * active.
 */
import { Type } from 'typebox';
import { AppError } from '../../core/errors.ts';
import { REMOTE_START_PATH } from '../../core/cluster/remote-nodes.ts';
import { findSession } from '../../store/sessions-store.ts';
import type { Services } from '../../services.ts';
import type { App } from '../types.ts';
import { InternalEgressPolicy } from './egress-policy-route.ts';
import { SignedPrincipal } from './signed-principal.ts';

const Body = Type.Object({
  principal: SignedPrincipal,
  session_id: Type.String({ minLength: 1, maxLength: 100 }),
  spec: Type.Object({
    vcpuCount: Type.Integer({ minimum: 1, maximum: 64 }),
    memoryMb: Type.Integer({ minimum: 64 }),
    lifetimeSeconds: Type.Integer({ minimum: 1 }),
    name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    metadata: Type.Optional(Type.Record(Type.String(), Type.String())),
    lifecycleHooks: Type.Optional(
      Type.Union([Type.Object({ preStop: Type.Union([Type.Object({ command: Type.String({ minLength: 1 }), timeoutSeconds: Type.Integer({ minimum: 1, maximum: 120 }) }), Type.Null()]) }), Type.Null()]),
    ),
    egressPolicy: Type.Optional(InternalEgressPolicy),
  }),
});

export function registerInternalVmStartRoute(app: App, services: Services): void {
  app.post(
    REMOTE_START_PATH,
    { schema: { body: Body } },
    async (request) => {
      const { principal, session_id: sessionId, spec } = request.body;
      const session = await findSession(services.database.db, sessionId);
      if (!session || session.userId !== principal.userId) throw new AppError('NOT_FOUND', `session ${sessionId} not found`);
      // Validated again here, as any policy this node enforces (the sender normalized it too).
      const { egressPolicy, ...rest } = spec;
      const live = await services.sandbox.vms.startPlacedHere(principal, session, {
        ...rest,
        ...(egressPolicy ? { egressPolicy: services.sandbox.egress.normalize(egressPolicy) } : {}),
      });
      return { vm_id: live.vm.id };
    },
  );
}
