/** GET /v1/apps/{app}/deployments/{version}/logs and GET /v1/apps/{app}/logs: plain-text streams. */
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, byMediaType } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { Type } from 'typebox';
import { AppParams, FollowQuery, VersionParams } from './schemas.ts';

/** Aborts when the reader goes away. */
function readerGone(request: FastifyRequest): AbortSignal {
  const controller = new AbortController();
  request.raw.once('close', () => controller.abort());
  return controller.signal;
}

function sendText(reply: FastifyReply, text: AsyncGenerator<string>): FastifyReply {
  return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-cache, no-transform').header('x-accel-buffering', 'no').send(Readable.from(text));
}

const TEXT = byMediaType('The log as plain text, one line per event', { 'text/plain': Type.String() });

export function registerAppLogs(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/apps/:app/deployments/:version/logs',
    {
      schema: {
        tags: ['apps'],
        summary: "A deployment's log",
        description:
          'Upload, install output (`install| `), start, health checks and the switch, each line stamped. With `follow=true` the answer stays open and ends when the deployment reaches `live`, `failed` or `stopped`.',
        security: BEARER_OR_API_KEY,
        params: VersionParams,
        querystring: FollowQuery,
        response: authedResponses({ 200: TEXT }, { 404: 'No such app among yours, or no such version' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const { app: key, version } = request.params;
      const text = await services.sandbox.apps.deploymentLog(principalOf(request), key, version, request.query.follow ?? false, readerGone(request));
      return sendText(reply, text);
    },
  );
  app.get(
    '/v1/apps/:app/logs',
    {
      schema: {
        tags: ['apps'],
        summary: "The running app's output",
        description:
          "The start command's stdout and stderr of the live version's replicas (kept output: the newest 4 MiB per process), each line prefixed `[r1] `, `[r2] ` … when there are several. With `follow=true` the answer stays open for new output.",
        security: BEARER_OR_API_KEY,
        params: AppParams,
        querystring: FollowQuery,
        response: authedResponses({ 200: TEXT }, { 404: 'No such app among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const text = await services.sandbox.apps.appLog(principalOf(request), request.params.app, request.query.follow ?? false, readerGone(request));
      return sendText(reply, text);
    },
  );
}
