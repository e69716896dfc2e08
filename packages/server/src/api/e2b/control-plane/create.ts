/**
 * POST /v2/sandboxes (and the older POST /sandboxes): a new session from the named template, its VM started before
 * the answer (E2B's create returns a running sandbox). `base` and `code-interpreter-v1` are sandboxd's built-in
 * image (Python with its scientific packages, Node.js, the account `user`); any other name is one of the caller's
 * templates or snapshots.
 */
import { AppError } from '../../../core/errors.ts';
import type { VmSourceRef } from '../../../model.ts';
import { principalOf } from '../../authentication.ts';
import type { App, RouteContext } from '../../types.ts';
import { CODE_INTERPRETER_TEMPLATE, DEFAULT_TEMPLATE, type E2bClientData } from '../wire.ts';
import { sandboxCreated } from './sandbox-view.ts';
import { NewSandbox } from './schemas.ts';

const BUILT_IN = new Set([DEFAULT_TEMPLATE, CODE_INTERPRETER_TEMPLATE]);
/** sandboxd's shortest VM lifetime; E2B allows shorter timeouts. */
const MIN_LIFETIME_SECONDS = 20;

export function registerCreateSandbox(app: App, { services, requireAuth }: RouteContext): void {
  const { sandbox } = services;
  for (const url of ['/v2/sandboxes', '/sandboxes']) {
    app.post(url, { schema: { hide: true, body: NewSandbox }, onRequest: requireAuth }, async (request, reply) => {
      const principal = principalOf(request);
      const body = request.body;
      if (body.mcp !== undefined && body.mcp !== null) throw new AppError('BAD_REQUEST', 'the MCP gateway is not offered by sandboxd (see docs/e2b.md)');
      if (body.volumeMounts?.length) throw new AppError('BAD_REQUEST', 'E2B volume mounts are not offered; mount sandboxd volumes through POST /v1/vms');
      let source: VmSourceRef | undefined;
      if (!BUILT_IN.has(body.templateID)) {
        source = (await sandbox.sources.resolve(principal.userId, await sandbox.sources.byName(principal.userId, body.templateID))).ref;
      }
      const clientData: E2bClientData = {
        template: body.templateID,
        publicTraffic: body.network?.allowPublicTraffic !== false,
        autoPause: body.autoPause === true,
      };
      const session = await sandbox.sessions.create(principal, {
        ...(body.timeout !== undefined ? { vmLifetimeSeconds: Math.max(body.timeout, MIN_LIFETIME_SECONDS) } : {}),
        metadata: body.metadata ?? {},
        env: body.envVars ?? {},
        ...(source ? { source } : {}),
        clientData: { ...clientData },
      });
      await sandbox.vms.ensureVm(principal, session);
      reply.code(201);
      return sandboxCreated(services, session);
    });
  }
}
