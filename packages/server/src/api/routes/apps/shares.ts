/** /v1/shares: make a session's port reachable by others through the preview proxy, list, read, revoke. */
import { Type, type Static } from 'typebox';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { ShareView } from '../../../core/shares.ts';
import type { App, RouteContext } from '../../types.ts';
import { ShareIdParams, type Share, type ShareCreateBody } from './schemas.ts';

const SCHEME =
  'A public share lets anyone open the port. A private share hands out a signed, expiring link (`url`, `direct_url`): the first request with it sets an HttpOnly cookie scoped to that preview and redirects to the same address without the token, so pages, assets and WebSockets all work in a browser. Deleting the share revokes links and cookies at once.';

export function registerShareRoutes(app: App, { services, requireAuth }: RouteContext): void {
  const { shares } = services.sandbox;
  app.post(
    '/v1/shares',
    {
      schema: {
        tags: ['apps'],
        summary: 'Share a port of a session',
        description: SCHEME,
        security: BEARER_OR_API_KEY,
        body: Type.Ref('ShareCreateRequest'),
        response: authedResponses({ 201: Type.Ref('Share') }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const body = request.body as ShareCreateBody;
      const share = await shares.create(principalOf(request), {
        sessionId: body.session_id,
        port: body.port,
        isPublic: body.is_public,
        expiresInSeconds: body.expires_in_seconds ?? null,
      });
      return reply.code(201).send(toShareResponse(share));
    },
  );
  app.get(
    '/v1/shares',
    {
      schema: {
        tags: ['apps'],
        summary: 'Your shares, newest first',
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({ session_id: Type.Optional(Type.String({ description: 'Only the shares of this session' })) }),
        response: authedResponses({ 200: Type.Ref('ShareList') }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => ({ shares: (await shares.list(principalOf(request), request.query.session_id)).map(toShareResponse) }),
  );
  app.get(
    '/v1/shares/:share_id',
    {
      schema: {
        tags: ['apps'],
        summary: 'A share (a private one with a freshly signed link)',
        security: BEARER_OR_API_KEY,
        params: ShareIdParams,
        response: authedResponses({ 200: Type.Ref('Share') }, { 404: 'No such share among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toShareResponse(await shares.get(principalOf(request), request.params.share_id)),
  );
  app.delete(
    '/v1/shares/:share_id',
    {
      schema: {
        tags: ['apps'],
        summary: 'Revoke a share',
        description: 'Links and cookies of the share stop working with the next request. Answers the share as it was.',
        security: BEARER_OR_API_KEY,
        params: ShareIdParams,
        response: authedResponses({ 200: Type.Ref('Share') }, { 404: 'No such share among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => toShareResponse(await shares.delete(principalOf(request), request.params.share_id)),
  );
}

function toShareResponse({ share, url, directUrl, linkExpiresAt }: ShareView): Static<typeof Share> {
  return {
    share_id: share.id,
    session_id: share.sessionId,
    port: share.port,
    is_public: share.isPublic,
    url,
    direct_url: directUrl,
    link_expires_at: linkExpiresAt,
    expires_at: share.expiresAt,
    created_at: share.createdAt,
  };
}
