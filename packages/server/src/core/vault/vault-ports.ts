/**
 * What the vault needs from the network side (net/egress), declared here so the adapter imports the core and not
 * the other way round: the deployment CA's material, a request the TLS interceptor read from a guest and what it
 * sends upstream instead, and the plan for a connection the egress proxy allowed.
 */
import type { Transform } from 'node:stream';

/** A certificate authority: its certificate, and its private key as an unencrypted PKCS#8 PEM (`PRIVATE KEY`). */
export interface CaMaterial {
  certPem: string;
  keyPem: string;
}

/** What the proxy does with an allowed connection of a VM whose session holds placeholders. */
export type VaultPlan = { intercept: true } | { intercept: false; inspect(chunk: Buffer): void };

/** One HTTP request a guest sent on a connection the TLS interceptor terminated. */
export interface InterceptedRequest {
  /** The SNI name the guest connected to. */
  name: string;
  method: string;
  /** Request target in origin form (path and query; an absolute-form target for `name` is cut to its path). */
  path: string;
  /** Node's rawHeaders layout: [name, value, name, value, ...], as the guest sent them. */
  rawHeaders: string[];
  /**
   * Set when the request is not for `name` (its Host, or its absolute-form target, names another host): it is
   * answered 421 and never forwarded, whatever `rewrite` returns; `rewrite` is called to record it.
   */
  misdirected?: string;
}

/** Masks secrets in what the upstream answers (same length, so that framing stays true). */
export interface AnswerScrubber {
  /** Nothing to mask: the answer passes as it is (and compressed answers are not decoded). */
  readonly active: boolean;
  /** A status text, header name or header value (latin1, as Node gives them) with every secret masked. */
  text(text: string): string;
  /** A transform masking every secret in the bytes flowing through it. */
  stream(): Transform;
}

/** What the interceptor sends upstream for an intercepted request (the vault's `rewrite` returns it). */
export interface RewrittenRequest {
  path: string;
  rawHeaders: string[];
  /**
   * Masks the session's secrets in the answer. When active, the upstream is asked for `Accept-Encoding:
   * identity`, a compressed answer is decoded before it is scrubbed, and WebSocket compression is not offered.
   */
  scrubber?: AnswerScrubber;
  /** Called once the upstream answered (status) or failed (null, with the error); 421 for a misdirected request. */
  done?(status: number | null, error?: Error): void;
}
