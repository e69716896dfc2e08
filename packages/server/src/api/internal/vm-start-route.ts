/**
 * POST /internal/v1/vms/start: another node placed a session's new VM on this one (core/cluster/placement.ts).
 * Only a request signed with the cluster secret is served; it carries the principal the sending node
 * authenticated, which this node trusts as it trusts the sender. The VM is acquired here exactly as a local one
 * (quota in the shared store, reservation, restore, events, ready hooks); the answer is its id once it is
 * active. Hidden from the OpenAPI document: no user calls it.
 */
import { Type } from 'typebox';
import { AppError } from '../../core/errors.ts';
import { REMOTE_START_PATH } from '../../core/cluster/remote-nodes.ts';
import { findSession } from '../../store/sessions-store.ts';
import type { App, RouteContext } from '../types.ts';
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
  }),
});

export function registerInternalVmStartRoute(app: App, { services }: RouteContext): void {
  app.post(
    REMOTE_START_PATH,
    {
      schema: { hide: true, body: Body },
      onRequest: async (request) => void services.internalAuth.verify(request.method, request.url, request.headers),
    },
    async (request) => {
      const { principal, session_id: sessionId, spec } = request.body;
      const session = await findSession(services.database.db, sessionId);
      if (!session || session.userId !== principal.userId) throw new AppError('NOT_FOUND', `session ${sessionId} not found`);
      const live = await services.sandbox.vms.startPlacedHere(principal, session, spec);
      return { vm_id: live.vm.id };
    },
  );
}
