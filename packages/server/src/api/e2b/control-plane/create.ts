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
import { egressPolicyOf } from './network.ts';
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
      if (body.iam !== undefined && body.iam !== null)
        throw new AppError('BAD_REQUEST', 'workload identity tokens (iam) are not offered by sandboxd (see docs/e2b.md)');
      const unsupported = (['egressProxy', 'rules', 'maskRequestHost', 'httpsPorts'] as const).filter(
        (name) => body.network?.[name] !== undefined && body.network[name] !== null,
      );
      if (unsupported.length)
        throw new AppError(
          'BAD_REQUEST',
          `network.${unsupported.join(', network.')} not offered by sandboxd: use its egress policies and vault (see docs/e2b.md)`,
        );
      // E2B's autoPause (lifecycle.onTimeout: 'pause'): the sandbox is paused, not killed, when its timeout ends, and
      // kept for the plan's retention; traffic, envd calls and connect() resume it (autoResume is what that does).
      // (A pause keeps memory always: autoPauseMemory is read as true.)
      // Validated (and refused where this server cannot enforce it) before anything is made.
      const egress = egressPolicyOf(body);
      if (egress) {
        try {
          sandbox.egress.normalize(egress);
        } catch (error) {
          // E2B's SDK reads a 503 as "busy, retry"; a server without enforcement will never offer it.
          if (error instanceof AppError && error.code === 'SERVICE_UNAVAILABLE') throw new AppError('BAD_REQUEST', `network settings: ${error.message}`);
          throw error;
        }
      }
      let source: VmSourceRef | undefined;
      if (!BUILT_IN.has(body.templateID)) {
        source = (await sandbox.sources.resolve(principal.userId, await sandbox.sources.byName(principal.userId, body.templateID))).ref;
      }
      const clientData: E2bClientData = {
        template: body.templateID,
        publicTraffic: body.network?.allowPublicTraffic !== false,
      };
      const session = await sandbox.sessions.create(principal, {
        ...(body.timeout !== undefined ? { vmLifetimeSeconds: Math.max(body.timeout, MIN_LIFETIME_SECONDS) } : {}),
        metadata: body.metadata ?? {},
        env: body.envVars ?? {},
        ...(source ? { source } : {}),
        clientData: { ...clientData },
        ...(body.autoPause === true ? { onExpiry: 'pause' as const } : {}),
      });
      // The session's policy is in place before its first VM starts, so it holds from the VM's first instruction.
      if (egress) await sandbox.egress.setSessionPolicy(principal, session.id, egress);
      await sandbox.vms.ensureVm(principal, session);
      reply.code(201);
      return sandboxCreated(services, session);
    });
  }
}
