/**
 * Which URLs a webhook endpoint may have. By default the service refuses every address that reaches into its own
 * host or network rather than the public internet (SSRF): the ranges are `host/forbidden-addresses.ts`. This
 * checks a literal address when the endpoint is created or changed; the HTTP sender applies the same ranges to
 * every address a host name resolves to, at send time.
 */
import net from 'node:net';
import { forbiddenAddressReason } from '../../host/forbidden-addresses.ts';
import { AppError } from '../errors.ts';

/**
 * Checks an endpoint URL when it is created or changed: http(s) only, and, unless private targets are
 * allowed, no literal forbidden address. Host names (`localhost` included) are checked after DNS
 * resolution whenever a webhook is sent, since what a name resolves to can change.
 */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AppError('WEBHOOK_URL_NOT_ALLOWED', `url "${raw}" is not an absolute URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new AppError('WEBHOOK_URL_NOT_ALLOWED', `url must start with http:// or https://, not ${url.protocol}//`);
  }
  if (!allowPrivate) {
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
    const reason = net.isIP(host) ? forbiddenAddressReason(host) : null;
    if (reason) {
      throw new AppError(
        'WEBHOOK_URL_NOT_ALLOWED',
        `url points at ${host}, a ${reason} address: webhooks go to public addresses only (set SANDBOXD_WEBHOOK_ALLOW_PRIVATE=true to allow private targets)`,
      );
    }
  }
  return url.toString();
}
