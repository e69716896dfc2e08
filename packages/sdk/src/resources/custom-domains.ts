/** Custom domains: serve a share, a port of a session or a deployed app at your own domain, proven by a DNS TXT record. */
import type { CustomDomain } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

/**
 * A share to serve (`shareId`), a session's port (`sessionId` + `port`, served to you only), or a deployed app
 * (`appId`: its id or name, served like the app's own URL).
 */
export type CustomDomainCreateOptions = { domain: string; dnsProvider?: 'manual' } & (
  | { shareId: string; sessionId?: string; port?: number; appId?: undefined }
  | { shareId?: undefined; sessionId: string; port: number; appId?: undefined }
  | { appId: string; shareId?: undefined; sessionId?: undefined; port?: undefined }
);

export class CustomDomains {
  constructor(private readonly transport: Transport) {}

  /**
   * Claims a domain. The answer's `verification` is the TXT record to create (`_sandboxd-challenge.<domain>`);
   * then call `verify`, or let the server's background check find it.
   */
  create(options: CustomDomainCreateOptions & CallOptions): Promise<CustomDomain> {
    return this.transport.call('/v1/custom-domains', 'post', {
      json: {
        domain: options.domain,
        ...(options.shareId !== undefined ? { share_id: options.shareId } : {}),
        ...(options.sessionId !== undefined ? { session_id: options.sessionId } : {}),
        ...(options.port !== undefined ? { port: options.port } : {}),
        ...(options.appId !== undefined ? { app_id: options.appId } : {}),
        dns_provider: options.dnsProvider ?? 'manual',
      },
      signal: options.signal,
    });
  }

  /** Your custom domains, newest first. */
  async list(options: CallOptions = {}): Promise<CustomDomain[]> {
    return (await this.transport.call('/v1/custom-domains', 'get', { signal: options.signal })).custom_domains;
  }

  get(domainId: string, options: CallOptions = {}): Promise<CustomDomain> {
    return this.transport.call('/v1/custom-domains/{domain_id}', 'get', { params: { domain_id: domainId }, signal: options.signal });
  }

  /** Checks the TXT record now: the answer is `verified`, or still `pending` with what was wrong in `last_error`. */
  verify(domainId: string, options: CallOptions = {}): Promise<CustomDomain> {
    return this.transport.call('/v1/custom-domains/{domain_id}/verify', 'post', { params: { domain_id: domainId }, signal: options.signal });
  }

  /** Deletes the claim; a verified domain stops being served at once. Answers the claim as it was. */
  delete(domainId: string, options: CallOptions = {}): Promise<CustomDomain> {
    return this.transport.call('/v1/custom-domains/{domain_id}', 'delete', { params: { domain_id: domainId }, signal: options.signal });
  }
}
