/**
 * The TLS interceptor's side towards the real server: the upstream request it sends for a guest's request (Host
 * set to the connection's name, TLS with SNI for it, the server's certificate verified for it), the limit on how
 * long connecting may take, and what the guest is told when the upstream could not be reached.
 */
import type http from 'node:http';
import type https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import { endToEndHeaders } from './http-relay-headers.ts';
import type { RewrittenRequest } from '../../core/vault/vault-ports.ts';

/** Where an intercepted connection's requests go: the name the guest asked for (its SNI) and the address and port pinned for it. */
export interface UpstreamTarget {
  name: string;
  address: string;
  port: number;
}

/** The OpenSSL verification failures Node reports as error codes (besides the host name check). */
const CERTIFICATE_ERRORS = new Set([
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_DECRYPT_CERT_SIGNATURE',
  'UNABLE_TO_DECODE_ISSUER_PUBLIC_KEY',
  'CERT_SIGNATURE_FAILURE',
  'CERT_NOT_YET_VALID',
  'CERT_HAS_EXPIRED',
  'ERROR_IN_CERT_NOT_BEFORE_FIELD',
  'ERROR_IN_CERT_NOT_AFTER_FIELD',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'CERT_CHAIN_TOO_LONG',
  'CERT_REVOKED',
  'INVALID_CA',
  'PATH_LENGTH_EXCEEDED',
  'INVALID_PURPOSE',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'HOSTNAME_MISMATCH',
]);

class UpstreamTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
}

/** Headers the interceptor sets itself on the way up: the guest's are dropped. */
const SET_UPSTREAM = ['expect', 'host'];
/** Dropped as well when answers are scrubbed: compression the scrubber cannot see through is not asked for. */
const SET_WHEN_SCRUBBING = ['accept-encoding', 'sec-websocket-extensions'];

/** The roots upstream certificates are verified against: Node's bundled ones and `upstreamCa`. Build it once (parsing ~150 roots takes milliseconds). */
export function upstreamTrust(upstreamCa: string[] = []): tls.SecureContext {
  return tls.createSecureContext({ ca: [...tls.rootCertificates, ...upstreamCa] });
}

/** The headers sent upstream: end-to-end ones, Host set to the connection's name, and what scrubbing needs. */
export function upstreamHeaders(target: UpstreamTarget, rewritten: RewrittenRequest, add: string[]): string[] {
  const scrubbing = rewritten.scrubber?.active === true;
  const host = target.port === 443 ? target.name : `${target.name}:${target.port}`;
  return endToEndHeaders(rewritten.rawHeaders, {
    drop: scrubbing ? [...SET_UPSTREAM, ...SET_WHEN_SCRUBBING] : SET_UPSTREAM,
    add: ['Host', host, ...(scrubbing ? ['Accept-Encoding', 'identity'] : []), ...add],
  });
}

/** The options of an upstream request to the target's address, verified for its name against `trust`. */
export function upstreamOptions(
  target: UpstreamTarget,
  trust: tls.SecureContext,
  method: string,
  path: string,
  headers: string[],
): https.RequestOptions & Pick<tls.ConnectionOptions, 'secureContext' | 'ALPNProtocols'> {
  const { name } = target;
  return {
    host: target.address,
    port: target.port,
    // SNI cannot carry an IP literal; the identity check below still uses the name.
    ...(net.isIP(name) ? {} : { servername: name }),
    checkServerIdentity: (_host: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(name, cert),
    secureContext: trust,
    ALPNProtocols: ['http/1.1'],
    method,
    path,
    headers,
  };
}

/** Fails `request` when a new upstream connection is not up (TCP and TLS) within `timeoutMs`. */
export function limitConnect(request: http.ClientRequest, timeoutMs: number): void {
  request.once('socket', (socket: net.Socket) => {
    if (request.reusedSocket) return;
    const timer = setTimeout(() => request.destroy(new UpstreamTimeoutError(`no TLS connection after ${timeoutMs} ms`)), timeoutMs);
    socket.once('secureConnect', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
  });
}

/** What the guest is told when its request could not be forwarded (no secret is ever in these messages). */
export function describeUpstreamError(error: Error, { name, address, port }: UpstreamTarget): string {
  const code = (error as NodeJS.ErrnoException).code ?? '';
  if (CERTIFICATE_ERRORS.has(code)) return `sandboxd vault: the upstream certificate is not valid for ${name}: ${error.message}`;
  if (error instanceof UpstreamTimeoutError) return `sandboxd vault: ${name} (${address}:${port}) did not accept a TLS connection in time: ${error.message}`;
  return `sandboxd vault: could not reach ${name} (${address}:${port}): ${error.message}`;
}
