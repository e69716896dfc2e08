/**
 * GET /v1/custom-domains/tls-check?domain=: no authentication. 200 only for a verified custom domain whose TXT
 * record is there now (looked up again, the answer reused a minute), for a reverse proxy's on-demand TLS "ask"
 * hook (Caddy's `on_demand_tls { ask … }`), so certificates are issued for verified domains and nothing else.
 */
import { Type } from 'typebox';
import { normalizeDomain } from '../../../core/custom-domain-names.ts';
import { notFound } from '../../../core/errors.ts';
import { publicResponses } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

export function registerCustomDomainTlsCheck(app: App, { services }: RouteContext): void {
  app.get(
    '/v1/custom-domains/tls-check',
    {
      schema: {
        tags: ['custom-domains'],
        summary: 'Whether a certificate may be issued for a domain (on-demand TLS ask)',
        description:
          "Answers 200 when `domain` is a verified custom domain of this server and its TXT record is still there (DNS is asked again; the answer is reused for a minute), else 404. Meant for a reverse proxy that obtains certificates on demand: Caddy's `on_demand_tls { ask http://127.0.0.1:8080/v1/custom-domains/tls-check }`. Says nothing about who owns the domain.",
        querystring: Type.Object({ domain: Type.String({ minLength: 1, maxLength: 255, description: 'The host name the proxy is asked to serve' }) }),
        response: publicResponses(
          { 200: Type.Ref('CustomDomainTlsCheck') },
          { 404: 'Not a verified custom domain, or its record is gone: no certificate should be issued' },
        ),
      },
    },
    async (request) => {
      const domain = normalizeDomain(request.query.domain);
      if (!(await services.sandbox.customDomains.isVerified(domain))) throw notFound(`verified custom domain ${domain.slice(0, 255)}`);
      return { domain, verified: true as const };
    },
  );
}
