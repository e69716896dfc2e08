/**
 * What the egress proxy's two steps (the HTTPS splice in `egress-proxy.ts`, the HTTP forwarder in
 * `http-forwarder.ts`) ask and report: a guest's request, the decision on it, and the finished connection. Its own
 * module, so the two steps import it rather than each other.
 */

/** The web schemes the proxy handles. */
export type EgressScheme = 'http' | 'https';

/** What the guest asked for. */
export interface EgressRequest {
  scheme: EgressScheme;
  /** Host header or SNI, lower case without port; null when the guest sent none (or an IP literal for HTTP: see `address`). */
  name: string | null;
  /** The IP literal of an HTTP Host header (a request to a raw address). */
  literalAddress: string | null;
  port: number;
  /** HTTPS: the ClientHello offers Encrypted Client Hello (its SNI names only a front end). */
  encryptedClientHello?: boolean;
}

export type EgressDecision =
  | {
      allowed: true;
      address: string;
      /** Terminate TLS and hand the connection to `EgressProxyOptions.intercept`. */
      intercept?: boolean;
      /** Sees every byte the guest sends on a spliced connection. */
      inspect?: (chunk: Buffer) => void;
    }
  | { allowed: false; reason: string };

/** One finished proxied connection (HTTPS) or request (HTTP). */
export interface ProxiedConnection {
  request: EgressRequest;
  /** The address connected to, when any. */
  address: string | null;
  verdict: 'allowed' | 'refused';
  reason: string | null;
  bytesSent: number;
  bytesReceived: number;
  startedAt: Date;
}
