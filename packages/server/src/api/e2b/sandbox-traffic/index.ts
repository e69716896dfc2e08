/**
 * A sandbox's ports, as E2B's SDK reaches them (rewrite.ts routes them here): the in-sandbox daemon (Connect RPC
 * and its HTTP part), the code interpreter, and every other port as the sandbox's own app. Each request is
 * admitted before anything else (access.ts); the daemon's answers are Connect's or envd's own error shapes.
 */
import { Code, ConnectError, createContextValues } from '@connectrpc/connect';
import { fastifyConnectPlugin } from '@connectrpc/connect-fastify';
import { errorToJson } from '@connectrpc/connect/protocol-connect';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../../services.ts';
import type { App, RouteContext } from '../../types.ts';
import { e2bErrorOf, toConnectError } from '../errors.ts';
import { CALLER } from '../envd/caller.ts';
import { Process } from '../envd/gen/process/process_pb.ts';
import { processService } from '../envd/process-service.ts';
import { admitToDaemon, type SandboxCaller } from './access.ts';
import { INTERNAL_PREFIX, targetOf, type SandboxTarget } from './rewrite.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admitted caller of a sandbox port request (api/e2b). */
    e2bCaller?: SandboxCaller;
  }
}

/** HTTP statuses of Connect's codes (the Connect protocol's table). */
const CONNECT_STATUS: Partial<Record<Code, number>> = {
  [Code.Canceled]: 499,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Unavailable]: 503,
  [Code.Unauthenticated]: 401,
};

/** A refusal before a Connect handler ran (admission, an unknown method), in Connect's unary error shape. */
function sendConnectError(reply: FastifyReply, error: unknown): FastifyReply {
  const connect = toConnectError(error);
  return reply
    .code(CONNECT_STATUS[connect.code] ?? 500)
    .type('application/json')
    .send(JSON.stringify(errorToJson(connect, undefined)));
}

/** A refusal in envd's HTTP shape (`/files`, `/health`): `{code, message}`. */
export function sendEnvdError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const known = e2bErrorOf(error);
  if (!known) request.log.error({ err: error }, 'unhandled error in the E2B in-sandbox API');
  const status = known?.status ?? 500;
  return reply.code(status).send({ code: status, message: known?.message ?? `internal error (request id ${request.id})` });
}

/** The target a request came with; a request that did not come through the rewriter is no sandbox's. */
function requireTarget(request: FastifyRequest): SandboxTarget {
  const target = targetOf(request.raw);
  if (!target) throw new ConnectError('not found', Code.NotFound);
  return target;
}

function registerDaemon(app: App, services: Services): void {
  app.register(
    async (daemon) => {
      daemon.addHook('onRequest', async (request) => {
        request.e2bCaller = await admitToDaemon(services, requireTarget(request), request.headers);
      });
      daemon.setErrorHandler((error, request, reply) => {
        const path = request.url.split('?')[0]!;
        return path.endsWith('/files') || path.endsWith('/health') ? sendEnvdError(request, reply, error) : sendConnectError(reply, error);
      });
      daemon.setNotFoundHandler((request, reply) => sendConnectError(reply, new ConnectError(`no method ${request.url.split('?')[0]}`, Code.Unimplemented)));
      await daemon.register(async (rpc) => {
        // Connect reads its own bodies (JSON or binary, enveloped for streams): the app's parsers step aside here.
        rpc.removeAllContentTypeParsers();
        await rpc.register(fastifyConnectPlugin, {
          routes(router) {
            router.service(Process, processService(services));
          },
          contextValues: (request) => createContextValues().set(CALLER, request.e2bCaller),
        });
      });
    },
    { prefix: `${INTERNAL_PREFIX}/envd` },
  );
}

export function registerSandboxTraffic(app: App, { services }: RouteContext): void {
  registerDaemon(app, services);
  app.all(`${INTERNAL_PREFIX}/unnamed`, { schema: { hide: true } }, async (_request, reply) =>
    reply.code(400).send({ code: 400, message: 'name the sandbox and its port in the E2b-Sandbox-Id and E2b-Sandbox-Port headers' }),
  );
}
