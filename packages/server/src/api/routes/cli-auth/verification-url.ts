/** Where the approval page lives, for the links the start operation hands out. */
import type { FastifyRequest } from 'fastify';

/**
 * The configured public URL, unless it cannot be what a browser should open: an unspecified listen
 * address (`0.0.0.0`, `::`) or port 0 (an ephemeral port not known when the configuration was made).
 * Then the origin the command line itself used to reach this server is the best guess.
 */
export function approvalPageBase(request: FastifyRequest, publicUrl: string): string {
  const url = new URL(publicUrl);
  const unusable = url.port === '0' || ['0.0.0.0', '[::]', '::'].includes(url.hostname);
  if (!unusable) return publicUrl.replace(/\/$/, '');
  return `${request.protocol}://${request.host}`;
}
