/**
 * POST /sandboxes/{sandboxID}/pause: the sandbox's VM is paused (memory and disk saved, its lifetime stops
 * counting); 204. Already paused: 409, which the SDK answers as `false`. sandboxd always keeps the memory, so
 * E2B's filesystem-only pause (`memory: false`, `keepMemory: false`) pauses the same way: a later connect restores
 * the processes too, where E2B would have rebooted the sandbox.
 */
import { AppError } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { ownedSandbox } from './owned-sandbox.ts';
import { absentBodyAsEmpty, PauseBody, SandboxParams } from './schemas.ts';

export function registerPauseSandbox(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/sandboxes/:sandboxID/pause',
    { schema: { hide: true, params: SandboxParams, body: PauseBody }, onRequest: requireAuth, preValidation: absentBodyAsEmpty },
    async (request, reply) => {
      const principal = principalOf(request);
      const { sandboxID } = request.params;
      const { vm, state } = await ownedSandbox(services, principal, sandboxID);
      if (state === 'paused') throw new AppError('CONFLICT', `sandbox ${sandboxID} is paused already`);
      await services.sandbox.vms.pause(principal, vm.id);
      return reply.code(204).send();
    },
  );
}
