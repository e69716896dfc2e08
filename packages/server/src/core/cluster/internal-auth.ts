/**
 * Authentication of traffic between the nodes of a cluster: every internal request carries the sending node's
 * id, the time, and an HMAC-SHA256 over method, path (with query), time and node id, keyed with the cluster
 * secret (`SANDBOXD_CLUSTER_SECRET`, else generated once and shared through the store). A user's key never
 * travels between nodes and opens nothing internal; a request older or newer than MAX_SKEW_MS is refused, so a
 * captured one is useless soon after. Request bodies (streams) are not signed: put internal URLs on a private
 * network or behind TLS when the network between nodes is not trusted.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../errors.ts';

export const INTERNAL_HEADERS = { node: 'x-sandboxd-node', time: 'x-sandboxd-time', signature: 'x-sandboxd-signature' } as const;

/** How far a request's time may be from the receiver's clock (node clocks are NTP-synchronised). */
const MAX_SKEW_MS = 60_000;

export class InternalAuth {
  constructor(
    private readonly secret: string,
    readonly nodeId: string,
  ) {}

  /** Headers that authenticate a request of this node to another. */
  sign(method: string, pathWithQuery: string, now = Date.now()): Record<string, string> {
    const time = String(now);
    return {
      [INTERNAL_HEADERS.node]: this.nodeId,
      [INTERNAL_HEADERS.time]: time,
      [INTERNAL_HEADERS.signature]: this.mac(method, pathWithQuery, time, this.nodeId),
    };
  }

  /** The sending node's id, or INVALID_CREDENTIALS / NOT_AUTHENTICATED. */
  verify(method: string, pathWithQuery: string, headers: IncomingHttpHeaders, now = Date.now()): string {
    const node = headers[INTERNAL_HEADERS.node];
    const time = headers[INTERNAL_HEADERS.time];
    const signature = headers[INTERNAL_HEADERS.signature];
    if (typeof node !== 'string' || typeof time !== 'string' || typeof signature !== 'string') {
      throw new AppError('NOT_AUTHENTICATED', 'internal cluster requests must be signed by a node of the cluster');
    }
    if (!/^\d{1,16}$/.test(time) || Math.abs(now - Number(time)) > MAX_SKEW_MS) {
      throw new AppError('INVALID_CREDENTIALS', 'internal request signed too long ago (or the nodes\u2019 clocks disagree by over a minute)');
    }
    const expected = Buffer.from(this.mac(method, pathWithQuery, time, node));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AppError('INVALID_CREDENTIALS', 'bad internal request signature');
    return node;
  }

  private mac(method: string, pathWithQuery: string, time: string, node: string): string {
    return createHmac('sha256', this.secret).update(`${method.toUpperCase()}\n${pathWithQuery}\n${time}\n${node}`).digest('base64url');
  }
}
