/** POST /v1/custom-domains: claim a domain for a share (or a session's port); answers the TXT record that proves it. */
import { Type } from 'typebox';
import { auditActorOf } from '../../audit-context.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { toCustomDomainRecord, type CustomDomainCreateBody } from './schemas.ts';

export function registerCreateCustomDomain(app: App, { services, requireAuth }: RouteContext): void {
  app.post(
    '/v1/custom-domains',
    {
      schema: {
        tags: ['custom-domains'],
        summary: 'Claim a custom domain for a share or a port',
        description:
          "Maps `domain` to a share of yours (`share_id`: served with the share's access rules) or to a port of a session of yours (`session_id` + `port`: served like a private preview). " +
          'The claim is `pending` until the TXT record in `verification` (`_sandboxd-challenge.<domain>`, your token) is seen in DNS: create it, then `POST /v1/custom-domains/{domain_id}/verify`, or wait for the background check. ' +
          'Once verified, requests whose Host is the domain are served at `/` (HTTP and WebSockets); front the server with a reverse proxy that obtains certificates on demand (see GET /v1/custom-domains/tls-check). ' +
          'Several accounts may claim one domain while pending; the first verified wins and the others fail. 409 when another account already verified it or you already hold a claim of it.',
        security: BEARER_OR_API_KEY,
        body: Type.Ref('CustomDomainCreateRequest'),
        response: authedResponses(
          { 201: Type.Ref('CustomDomain') },
          {
            404: 'No such share or session among yours',
            409: 'Another account verified the domain, you already hold a claim of it, or the share has expired',
            429: 'QUOTA_EXCEEDED: too many custom domains (pending or verified) on this account',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const body = request.body as CustomDomainCreateBody;
      const created = await services.sandbox.customDomains.create(
        principalOf(request),
        {
          domain: body.domain,
          ...(body.share_id !== undefined ? { shareId: body.share_id } : {}),
          ...(body.session_id !== undefined ? { sessionId: body.session_id } : {}),
          ...(body.port !== undefined ? { port: body.port } : {}),
          ...(body.dns_provider !== undefined ? { dnsProvider: body.dns_provider } : {}),
          dnsCredentials: body.dns_credentials ?? null,
        },
        auditActorOf(request),
      );
      return reply.code(201).send(toCustomDomainRecord(created));
    },
  );
}
