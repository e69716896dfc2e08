/**
 * POST /v2/sandboxes/{sandboxID}/connect (`Sandbox.connect`, `sandbox.connect()`): a paused sandbox is resumed (the
 * same VM, its memory and disk as they were) and answered with 201; a running one is answered with 200. Either way
 * its timeout is only ever extended: it then lives at least `timeout` seconds more (default: the lifetime it was
 * created with). The deprecated POST /sandboxes/{sandboxID}/connect and /resume answer the same; /resume of a
 * running sandbox is a 409, as E2B's.
 */
import { AppError } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { extendTimeoutOf } from './lifetime.ts';
import { ownedSandbox } from './owned-sandbox.ts';
import { sandboxCreated } from './sandbox-view.ts';
import { absentBodyAsEmpty, ConnectBody, SandboxParams } from './schemas.ts';

export function registerConnectSandbox(app: App, { services, requireAuth }: RouteContext): void {
  const routes = [
    { url: '/v2/sandboxes/:sandboxID/connect', resumeOnly: false },
    { url: '/sandboxes/:sandboxID/connect', resumeOnly: false },
    { url: '/sandboxes/:sandboxID/resume', resumeOnly: true },
  ];
  for (const { url, resumeOnly } of routes) {
    app.post(
      url,
      { schema: { hide: true, params: SandboxParams, body: ConnectBody }, onRequest: requireAuth, preValidation: absentBodyAsEmpty },
      async (request, reply) => {
        const principal = principalOf(request);
        const { sandboxID } = request.params;
        const { body } = request;
        if (body.memory === false) throw new AppError('BAD_REQUEST', 'sandboxd resumes a sandbox with its memory only (onResume "reboot" is not offered)');
        const { session, vm, state } = await ownedSandbox(services, principal, sandboxID);
        if (resumeOnly && state === 'running') throw new AppError('CONFLICT', `sandbox ${sandboxID} is running, not paused`);
        const timeout = body.timeout ?? session.vmLifetimeSeconds;
        if (state === 'paused') {
          const resumed = await services.sandbox.vms.resume(principal, vm.id);
          await extendTimeoutOf(services, principal, resumed.vm, timeout);
          reply.code(201);
        } else {
          await extendTimeoutOf(services, principal, vm, timeout);
          reply.code(200);
        }
        return sandboxCreated(services, session);
      },
    );
  }
}
