/**
 * A session's Python contexts (core/python-contexts.ts): make one, list, read, restart (clear its state), delete.
 * Code runs in one with `context_id` on execute. Every route checks that the session is the caller's first.
 */
import { Type } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { ContextParams, OneContextParams, toContextInfo, type ContextCreateRequest } from './schemas.ts';

const TAGS = ['contexts'];
const NOT_FOUND = 'No such session among yours, or no such context in it';

export function registerContextRoutes(app: App, { services, requireAuth }: RouteContext): void {
  const contexts = services.sandbox.contexts;

  app.post(
    '/v1/sessions/:session_id/contexts',
    {
      schema: {
        tags: TAGS,
        summary: 'Make a Python context',
        description:
          "Makes a context in the session: a Python interpreter of its own in the session's VM, with variables and imports of its own, started in `cwd` with its first run (`context_id` on execute). Every session also has its `default` context, the interpreter an execute without `context_id` uses. A context lasts as long as its session; when the session's VM ends, the next run in it starts a fresh interpreter, as in the default one. At most 16 per session besides the default one (429).",
        security: BEARER_OR_API_KEY,
        params: ContextParams,
        body: Type.Ref('ContextCreateRequest') as unknown as typeof ContextCreateRequest,
        response: authedResponses({ 201: Type.Ref('ContextInfo') }, { 404: 'No such session among yours', 429: 'The session has the most contexts it may' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const body = (request.body ?? {}) as { cwd?: string };
      const context = await contexts.create(principalOf(request), request.params.session_id, body.cwd === undefined ? {} : { cwd: body.cwd });
      return reply.code(201).send(toContextInfo(context));
    },
  );

  app.get(
    '/v1/sessions/:session_id/contexts',
    {
      schema: {
        tags: TAGS,
        summary: 'List Python contexts',
        description: "The session's contexts: `default` first, then the ones made, oldest first.",
        security: BEARER_OR_API_KEY,
        params: ContextParams,
        response: authedResponses({ 200: Type.Ref('ContextList') }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => ({ contexts: (await contexts.list(principalOf(request), request.params.session_id)).map(toContextInfo) }),
  );

  app.get(
    '/v1/sessions/:session_id/contexts/:context_id',
    {
      schema: {
        tags: TAGS,
        summary: 'Read a Python context',
        security: BEARER_OR_API_KEY,
        params: OneContextParams,
        response: authedResponses({ 200: Type.Ref('ContextInfo') }, { 404: NOT_FOUND }),
      },
      onRequest: requireAuth,
    },
    async (request) => toContextInfo(await contexts.get(principalOf(request), request.params.session_id, request.params.context_id)),
  );

  app.post(
    '/v1/sessions/:session_id/contexts/:context_id/restart',
    {
      schema: {
        tags: TAGS,
        summary: 'Restart a Python context',
        description:
          "Ends the context's interpreter: its variables and imports are gone, and its next run starts a fresh one (in its `cwd`). Works on `default` too. Other contexts and the VM go on.",
        security: BEARER_OR_API_KEY,
        params: OneContextParams,
        response: authedResponses({ 200: Type.Ref('ContextInfo') }, { 404: NOT_FOUND }),
      },
      onRequest: requireAuth,
    },
    async (request) => toContextInfo(await contexts.restart(principalOf(request), request.params.session_id, request.params.context_id)),
  );

  app.delete(
    '/v1/sessions/:session_id/contexts/:context_id',
    {
      schema: {
        tags: TAGS,
        summary: 'Delete a Python context',
        description: 'Deletes a context you made and ends its interpreter. The `default` context cannot be deleted (409): restart it instead.',
        security: BEARER_OR_API_KEY,
        params: OneContextParams,
        response: authedResponses({ 204: Type.Null() }, { 404: NOT_FOUND, 409: 'The default context cannot be deleted' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      await contexts.remove(principalOf(request), request.params.session_id, request.params.context_id);
      return reply.code(204).send();
    },
  );
}
