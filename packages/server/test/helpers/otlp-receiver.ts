/**
 * An OTLP/HTTP traces receiver for tests: a plain node:http server on 127.0.0.1 that accepts `POST /v1/traces` in
 * OTLP's JSON encoding (what the server's exporter sends) and keeps every span it got, flattened with its resource's
 * service name.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  kind: number;
  /** Attributes by key, each value as OTLP/JSON gave it (`stringValue`, `intValue` as a string, `boolValue`…), unwrapped. */
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  serviceName: unknown;
}

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
  status?: { code?: number; message?: string };
}
interface OtlpTraces {
  resourceSpans: { resource?: { attributes?: OtlpAttribute[] }; scopeSpans: { spans?: OtlpSpan[] }[] }[];
}

const unwrap = (attributes: OtlpAttribute[] = []) => Object.fromEntries(attributes.map(({ key, value }) => [key, Object.values(value)[0]]));

export interface OtlpReceiver {
  /** The URL to export traces to (`…/v1/traces`). */
  url: string;
  spans: ReceivedSpan[];
  /** Requests that were not a valid OTLP/JSON export (the test fails on any). */
  rejected: string[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rejected: string[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        if (request.method !== 'POST' || request.url !== '/v1/traces') throw new Error(`${request.method} ${request.url}`);
        if (!request.headers['content-type']?.startsWith('application/json')) throw new Error(`content-type ${request.headers['content-type']}`);
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpTraces;
        for (const { resource, scopeSpans } of body.resourceSpans) {
          const serviceName = unwrap(resource?.attributes)['service.name'];
          for (const span of scopeSpans.flatMap((scope) => scope.spans ?? [])) {
            spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              parentSpanId: span.parentSpanId ?? '',
              name: span.name,
              kind: span.kind,
              attributes: unwrap(span.attributes),
              status: span.status ?? {},
              serviceName,
            });
          }
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      } catch (error) {
        rejected.push((error as Error).message);
        response.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    spans,
    rejected,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
