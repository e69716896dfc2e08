/** POST /v1/custom-domains: claim a domain for a share, a session's port or an app; answers the TXT record that proves it. */
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
        summary: 'Claim a custom domain for a share, a port or an app',
        description:
          "Maps `domain` to a share of yours (`share_id`: served with the share's access rules) to a port of a session of yours (`session_id` + `port`: served like a private preview), or to a deployed app of yours (`app_id`, its id or name: served like the app's own URL, public or private as the app is). Give exactly one of these targets (422 naming the fields otherwise). " +
          'The claim is `pending` until the TXT record in `verification` (`_sandboxd-challenge.<domain>`, your token) is seen in DNS: create it, then `POST /v1/custom-domains/{domain_id}/verify`, or wait for the background check. ' +
          'Once verified, requests whose Host is the domain are served at `/` (HTTP and WebSockets); front the server with a reverse proxy that obtains certificates on demand (see GET /v1/custom-domains/tls-check). ' +
          'Several accounts may claim one domain while pending; the first verified wins and the others fail. 409 when another account already verified it or you already hold a claim of it.',
        security: BEARER_OR_API_KEY,
        body: Type.Ref('CustomDomainCreateRequest'),
        response: authedResponses(
          { 201: Type.Ref('CustomDomain') },
          {
            404: 'No such share, session or app among yours',
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
          ...(body.app_id !== undefined ? { appId: body.app_id } : {}),
          ...(body.dns_provider !== undefined ? { dnsProvider: body.dns_provider } : {}),
          dnsCredentials: body.dns_credentials ?? null,
        },
        auditActorOf(request),
      );
      return reply.code(201).send(toCustomDomainRecord(created));
    },
  );
}
