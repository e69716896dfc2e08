/**
 * Authentication of traffic between the nodes of a cluster. Every internal request carries an HMAC-SHA256, keyed
 * with the cluster secret (`SANDBOXD_CLUSTER_SECRET`, else generated once and shared through the store), over
 * everything that decides what it does:
 *
 *   version, method, path with query, time, source node, destination node, random nonce, sha256 of the body
 *
 * The receiver refuses a request signed for another node, one whose time is more than MAX_SKEW_MS from its clock,
 * one whose nonce it has already seen, and one whose body (the raw bytes it received, the empty body hashed too)
 * does not hash to the signed digest. So a captured request can neither be sent again, nor to another node, nor
 * with another body (the body carries the principal the sender authenticated: the receiver trusts it only
 * because the whole body is signed). For a WebSocket operation the "body" is its arguments message
 * (agent-rpc.ts). A user's key never travels between nodes and opens nothing internal.
 *
 * What this does not do is encrypt: keep internal traffic on a private network or behind TLS (the internal
 * listener, SANDBOXD_INTERNAL_LISTEN), and note that an active man in the middle can still take over a WebSocket
 * after its signed handshake; the signature stops replays and forgeries, not a hijacked connection.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { AppError } from '../errors.ts';

export const INTERNAL_HEADERS = {
  /** The sending node. */
  node: 'x-sandboxd-node',
  /** The node the request is for: only that node accepts it. */
  destination: 'x-sandboxd-destination',
  time: 'x-sandboxd-time',
  nonce: 'x-sandboxd-nonce',
  /** Lowercase hex sha256 of the body's bytes (of the arguments message for a WebSocket operation). */
  bodySha256: 'x-sandboxd-body-sha256',
  signature: 'x-sandboxd-signature',
} as const;

/** How far a request's time may be from the receiver's clock (node clocks are NTP-synchronised). */
export const MAX_SKEW_MS = 60_000;

/**
 * Most nonces a node remembers at once: every internal request it accepted in the last two minutes at most
 * (about 2,000 requests a second sustained), some 100 bytes each. Past it, requests are refused (503) until
 * older nonces expire: forgetting one early would let its request be replayed.
 */
export const MAX_REMEMBERED_NONCES = 250_000;

/** Bumped when what the MAC covers changes: a node of an older scheme is refused, never half-understood. */
const SCHEME = 'sandboxd-internal-v2';
const NODE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const NONCE = /^[A-Za-z0-9_-]{22,64}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const TIME = /^\d{1,16}$/;

/** A request to sign: `body` is exactly the bytes that will be sent (absent or null: an empty body). */
export interface InternalRequest {
  method: string;
  pathWithQuery: string;
  /** The node the request goes to. */
  destination: string;
  body?: string | Uint8Array | null;
}

/** What a request's headers proved: who sent it, and the digest its body must have (checked separately). */
export interface VerifiedHeaders {
  from: string;
  bodySha256: string;
}

/** Lowercase hex sha256 of a body; an absent body is the empty one. */
export function bodySha256(body: string | Uint8Array | null | undefined): string {
  return createHash('sha256')
    .update(body ?? '')
    .digest('hex');
}

/**
 * Throws INVALID_CREDENTIALS unless `body` (the raw bytes received) hashes to the digest the request's signature
 * covers. Call it before the body is used.
 */
export function checkSignedBody(verified: VerifiedHeaders, body: string | Uint8Array | null | undefined): void {
  const given = Buffer.from(bodySha256(body));
  const expected = Buffer.from(verified.bodySha256);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new AppError('INVALID_CREDENTIALS', 'internal request refused: its body is not the one that was signed');
  }
}

/**
 * The nonces of the requests this node accepted, each until its request's time leaves the window. One cache per
 * node is enough: a signature names its destination, so a nonce accepted here can only ever be replayed here.
 */
export class SeenNonces {
  /** Nonce → when it may be forgotten (ms). A Map keeps insertion order, which is nearly expiry order. */
  private readonly expiries = new Map<string, number>();

  constructor(private readonly capacity = MAX_REMEMBERED_NONCES) {}

  get size(): number {
    return this.expiries.size;
  }

  /** Records `nonce` until `expiresAtMs`; false when it is already there (a replay). */
  add(nonce: string, expiresAtMs: number, now: number): boolean {
    this.forgetExpired(now, false);
    if (this.expiries.has(nonce)) return false;
    if (this.expiries.size >= this.capacity) {
      this.forgetExpired(now, true);
      if (this.expiries.size >= this.capacity) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'this node is receiving more internal requests than it can remember for replay protection; retry in a moment',
        );
      }
    }
    this.expiries.set(nonce, expiresAtMs);
    return true;
  }

  /** Drops expired nonces: from the front until a live one (cheap, every call), or all of them (`sweep`). */
  private forgetExpired(now: number, sweep: boolean): void {
    for (const [nonce, expiresAt] of this.expiries) {
      if (expiresAt <= now) this.expiries.delete(nonce);
      else if (!sweep) return;
    }
  }
}

export class InternalAuth {
  private readonly seen: SeenNonces;

  constructor(
    private readonly secret: string,
    readonly nodeId: string,
    options: { maxRememberedNonces?: number } = {},
  ) {
    this.seen = new SeenNonces(options.maxRememberedNonces);
  }

  /** Headers that authenticate one request of this node to node `request.destination`; use them once. */
  sign(request: InternalRequest, now = Date.now()): Record<string, string> {
    const fields = {
      method: request.method.toUpperCase(),
      pathWithQuery: request.pathWithQuery,
      time: String(now),
      from: this.nodeId,
      destination: request.destination,
      nonce: randomBytes(16).toString('base64url'),
      bodySha256: bodySha256(request.body),
    };
    return {
      [INTERNAL_HEADERS.node]: fields.from,
      [INTERNAL_HEADERS.destination]: fields.destination,
      [INTERNAL_HEADERS.time]: fields.time,
      [INTERNAL_HEADERS.nonce]: fields.nonce,
      [INTERNAL_HEADERS.bodySha256]: fields.bodySha256,
      [INTERNAL_HEADERS.signature]: this.mac(fields),
    };
  }

  /**
   * Checks everything a request's headers carry: signed by a node of the cluster, for this node, within the
   * time window, with a nonce not seen before (remembered from here on). Answers the sender and the body digest
   * the signature covers: the caller must check the body against it ({@link checkSignedBody}) before using it.
   * Throws NOT_AUTHENTICATED (unsigned), INVALID_CREDENTIALS (forged, stale, replayed or for another node).
   */
  verifyHeaders(method: string, pathWithQuery: string, headers: IncomingHttpHeaders, now = Date.now()): VerifiedHeaders {
    const header = (name: string) => {
      const value = headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const from = header(INTERNAL_HEADERS.node);
    const destination = header(INTERNAL_HEADERS.destination);
    const time = header(INTERNAL_HEADERS.time);
    const nonce = header(INTERNAL_HEADERS.nonce);
    const digest = header(INTERNAL_HEADERS.bodySha256);
    const signature = header(INTERNAL_HEADERS.signature);
    if (from === undefined || destination === undefined || time === undefined || nonce === undefined || digest === undefined || signature === undefined) {
      throw new AppError('NOT_AUTHENTICATED', 'internal cluster requests must be signed by a node of the cluster');
    }
    // The shapes keep the MAC's fields unambiguous (none can hold the separator) and the nonce cache small.
    if (
      !NODE_ID.test(from) ||
      !NODE_ID.test(destination) ||
      !TIME.test(time) ||
      !NONCE.test(nonce) ||
      !SHA256_HEX.test(digest) ||
      /[\r\n]/.test(pathWithQuery)
    ) {
      throw new AppError('INVALID_CREDENTIALS', 'bad internal request signature');
    }
    const signedAt = Number(time);
    if (Math.abs(now - signedAt) > MAX_SKEW_MS) {
      throw new AppError('INVALID_CREDENTIALS', 'internal request signed too long ago (or the nodes\u2019 clocks disagree by over a minute)');
    }
    const expected = Buffer.from(this.mac({ method: method.toUpperCase(), pathWithQuery, time, from, destination, nonce, bodySha256: digest }));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new AppError('INVALID_CREDENTIALS', 'bad internal request signature');
    // After the MAC: only a node of the cluster learns which node this is.
    if (destination !== this.nodeId) {
      throw new AppError('INVALID_CREDENTIALS', `internal request refused: it was signed for node ${destination}, this is node ${this.nodeId}`);
    }
    // Only genuine requests reach the cache, so nobody without the secret can fill it. The nonce is kept for as
    // long as its request would pass the time check above.
    if (!this.seen.add(nonce, signedAt + MAX_SKEW_MS, now)) {
      throw new AppError('INVALID_CREDENTIALS', 'internal request refused: it was already received once (replayed nonce)');
    }
    return { from, bodySha256: digest };
  }

  /** Checks a request whose body is at hand (a WebSocket's first message goes through verifyHeaders + checkSignedBody). */
  verify(method: string, pathWithQuery: string, headers: IncomingHttpHeaders, body: string | Uint8Array | null | undefined, now = Date.now()): string {
    const verified = this.verifyHeaders(method, pathWithQuery, headers, now);
    checkSignedBody(verified, body);
    return verified.from;
  }

  private mac(fields: { method: string; pathWithQuery: string; time: string; from: string; destination: string; nonce: string; bodySha256: string }): string {
    const text = [SCHEME, fields.method, fields.pathWithQuery, fields.time, fields.from, fields.destination, fields.nonce, fields.bodySha256].join('\n');
    return createHmac('sha256', this.secret).update(text).digest('base64url');
  }
}
