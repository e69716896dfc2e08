/** The port the dispatcher sends through; `src/webhooks/http-sender.ts` implements it over node:http(s). */

export interface WebhookRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** For connecting, sending and reading the answer together. */
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface WebhookResponse {
  /** The receiver's HTTP status; null when no answer arrived (refused address, DNS, connect, timeout). */
  status: number | null;
  /** What went wrong before an answer arrived, or null. */
  error: string | null;
  durationMs: number;
  /** The start of the answer's body (capped; deliveries discard it, verification reads it). */
  body: string;
  /** True when `signal` stopped the request (the server is shutting down). */
  aborted: boolean;
}

export interface WebhookTransport {
  send(request: WebhookRequest): Promise<WebhookResponse>;
}
