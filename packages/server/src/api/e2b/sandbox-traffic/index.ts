/**
 * A sandbox's ports, as E2B's SDK reaches them (rewrite.ts routes them here): the in-sandbox daemon (Connect RPC
 * and its HTTP part), the code interpreter, and every other port as the sandbox's own app. Each request is
 * admitted before anything else (access.ts); the daemon's answers are Connect's or envd's own error shapes.
 */
import { Code, ConnectError, createContextValues } from '@connectrpc/connect';
import { fastifyConnectPlugin } from '@connectrpc/connect-fastify';
import { encodeEnvelope } from '@connectrpc/connect/protocol';
import { codeToHttpStatus, contentTypeStreamRegExp, endStreamFlag, endStreamToJson, errorToJson } from '@connectrpc/connect/protocol-connect';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../../services.ts';
import type { App, RouteContext } from '../../types.ts';
import { registerCodeInterpreter } from '../code-interpreter/index.ts';
import { e2bErrorOf, toConnectError } from '../errors.ts';
import { CALLER, SHUTDOWN } from '../envd/caller.ts';
import { admitSignedFileRequest } from '../envd/file-signature.ts';
import { registerFilesHttp } from '../envd/files-http.ts';
import { filesystemService } from '../envd/filesystem-service.ts';
import { Filesystem } from '../envd/gen/filesystem/filesystem_pb.ts';
import { Process } from '../envd/gen/process/process_pb.ts';
import { processService } from '../envd/process-service.ts';
import { admitToDaemon, requireRunning, type SandboxCaller } from './access.ts';
import { registerAppProxy } from './app-proxy.ts';
import { INTERNAL_PREFIX, targetOf, type SandboxTarget } from './rewrite.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The admitted caller of a sandbox port request (api/e2b). */
    e2bCaller?: SandboxCaller;
  }
}

/**
 * A refusal before a Connect handler ran (admission, an unknown method), as Connect's clients read one: a unary call
 * gets the HTTP status of its code and the error as JSON; a streaming call (`application/connect+…`) must get 200
 * with the error in the end-of-stream message (a client reads any other status as the code of that status alone).
 */
function sendConnectError(request: FastifyRequest, reply: FastifyReply, error: unknown): FastifyReply {
  const connect = toConnectError(error);
  const contentType = request.headers['content-type'] ?? '';
  if (contentTypeStreamRegExp.test(contentType)) {
    const endStream = new TextEncoder().encode(JSON.stringify(endStreamToJson(new Headers(), connect, undefined)));
    return reply
      .code(200)
      .type(contentType)
      .send(Buffer.from(encodeEnvelope(endStreamFlag, endStream)));
  }
  return reply
    .code(codeToHttpStatus(connect.code))
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

function isHealthCheck(request: FastifyRequest): boolean {
  return request.method === 'GET' && request.url.split('?')[0]!.endsWith('/health');
}

/** The target a request came with; a request that did not come through the rewriter is no sandbox's. */
function requireTarget(request: FastifyRequest): SandboxTarget {
  const target = targetOf(request.raw);
  if (!target) throw new ConnectError('not found', Code.NotFound);
  return target;
}

function registerDaemon(app: App, services: Services): void {
  // On the root app, before the server waits for open requests: streams would otherwise wait for their commands.
  const shutdown = new AbortController();
  app.addHook('preClose', async () => shutdown.abort());
  app.register(
    async (daemon) => {
      daemon.addHook('onRequest', async (request) => {
        const target = requireTarget(request);
        const caller = (await admitSignedFileRequest(services, target, request)) ?? (await admitToDaemon(services, target, request.headers));
        // /health answers for a sandbox that is not running (the SDK's isRunning); everything else needs it running.
        request.e2bCaller = isHealthCheck(request) ? caller : requireRunning(caller);
      });
      // envd's health check: 204 while the sandbox runs; 502 otherwise, as E2B's proxy answers for a stopped one.
      daemon.get('/health', { schema: { hide: true } }, async (request, reply) =>
        request.e2bCaller?.state === 'running' ? reply.code(204).send() : reply.code(502).send({ code: 502, message: 'the sandbox is not running' }),
      );
      daemon.setErrorHandler((error, request, reply) => {
        const path = request.url.split('?')[0]!;
        return path.endsWith('/files') || path.endsWith('/health') ? sendEnvdError(request, reply, error) : sendConnectError(request, reply, error);
      });
      daemon.setNotFoundHandler((request, reply) =>
        sendConnectError(request, reply, new ConnectError(`no method ${request.url.split('?')[0]}`, Code.Unimplemented)),
      );
      registerFilesHttp(daemon, services);
      await daemon.register(async (rpc) => {
        // Connect reads its own bodies (JSON or binary, enveloped for streams): the app's parsers step aside here.
        rpc.removeAllContentTypeParsers();
        // Connect's routes are the daemon's own protocol (its errors are Connect's), not part of /openapi.json.
        rpc.addHook('onRoute', (route) => void (route.schema = { ...route.schema, hide: true }));
        await rpc.register(fastifyConnectPlugin, {
          routes(router) {
            router.service(Process, processService(services));
            router.service(Filesystem, filesystemService(services));
          },
          contextValues: (request) => createContextValues().set(CALLER, request.e2bCaller).set(SHUTDOWN, shutdown.signal),
        });
      });
    },
    { prefix: `${INTERNAL_PREFIX}/envd` },
  );
}

export function registerSandboxTraffic(app: App, { services }: RouteContext): void {
  registerDaemon(app, services);
  registerAppProxy(app, services);
  registerCodeInterpreter(app, services);
  app.all(`${INTERNAL_PREFIX}/unnamed`, { schema: { hide: true } }, async (_request, reply) =>
    reply.code(400).send({ code: 400, message: 'name the sandbox and its port in the E2b-Sandbox-Id and E2b-Sandbox-Port headers' }),
  );
}
