/**
 * Every response a test receives is checked against the served OpenAPI document: its status must be declared
 * for the operation, its content type must be one declared for that status, and a JSON body must be valid
 * against the declared schema (Ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses). Bodies that are not JSON
 * (event streams, downloads as octet-stream, previews, HTML) are checked for status and content type only.
 *
 * The check runs in the server the test helper starts (`instrumentApp`), so it sees every response whatever
 * the client: `call()`, the SDK's fetch, the CLI in a child process, a raw socket. A response that does not
 * conform is replaced by status 599 with `{"code":"OPENAPI_VIOLATION","detail":"…"}` (so the test that
 * received it fails there, with the reason), and recorded, so the helper's `close()` fails the file even if
 * that test did not look at the status. Routes the document does not list (the document itself, /docs, the
 * HTML login page, unknown paths) are not operations and are not checked.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { App } from '../../src/api/types.ts';

export const VIOLATION_STATUS = 599;

export interface Violation {
  method: string;
  url: string;
  status: number;
  problem: string;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { responses?: Record<string, { content?: Record<string, { schema?: unknown }> }> }>>;
}

/** A route as Fastify knows it (`/v1/keys/:item_id`, `/v1/app/:id/:port/*`) → the document's path. */
export function documentPath(routeUrl: string): string {
  return routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\/\*$/, '/{path}');
}

function mediaTypeOf(contentType: string | undefined): string | null {
  return contentType ? contentType.split(';')[0]!.trim().toLowerCase() : null;
}

const escapePointer = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

export class OpenApiConformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  private readonly validators = new Map<string, ValidateFunction>();
  readonly violations: Violation[] = [];

  constructor(private readonly doc: OpenApiDocument) {
    (addFormats as unknown as (ajv: Ajv2020) => void)(this.ajv);
    this.ajv.addFormat('guest-path', true);
    this.ajv.addSchema(doc as object, 'openapi');
  }

  /** The document's operation for a route, or null when the route is not one (hidden, unknown). */
  private operation(method: string, routeUrl: string) {
    const item = this.doc.paths[documentPath(routeUrl)];
    if (!item) return null;
    const verb = method.toLowerCase();
    // Fastify answers HEAD on every GET route; the document lists HEAD only where it is its own operation.
    return item[verb] ?? (verb === 'head' ? item.get : undefined) ?? null;
  }

  /** What is wrong with a response, or null. `body` is null for streams and for bodies not checked. */
  problemWith(response: { method: string; routeUrl: string; status: number; contentType: string | undefined; body: string | null }): string | null {
    const operation = this.operation(response.method, response.routeUrl);
    if (!operation) return null;
    const responses = operation.responses ?? {};
    const statusKey = String(response.status);
    const family = `${statusKey[0]}XX`;
    const declared = responses[statusKey] ?? responses[family] ?? responses.default;
    if (!declared) return `status ${response.status} is not declared (declared: ${Object.keys(responses).join(', ')})`;
    const content = declared.content;
    const mediaType = mediaTypeOf(response.contentType);
    if (!content || Object.keys(content).length === 0) {
      // No content declared: an empty answer, or anything for the catch-all "default" (the preview proxy).
      if (response.body && response.body.length > 0 && declared !== responses.default && response.method !== 'HEAD') {
        return `status ${response.status} declares no content, but the answer has ${response.body.length} bytes of ${mediaType}`;
      }
      return null;
    }
    const range = mediaType ? `${mediaType.split('/')[0]}/*` : null;
    const declaredType = mediaType && content[mediaType] ? mediaType : range && content[range] ? range : content['*/*'] ? '*/*' : null;
    // An empty answer (a redirect, 204-like) carries no content type.
    if (!declaredType && !(response.body === '' && !mediaType)) {
      return `content type ${mediaType ?? '(none)'} is not declared for status ${response.status} (declared: ${Object.keys(content).join(', ')})`;
    }
    if (!declaredType || declaredType !== mediaType || response.body === null || response.method === 'HEAD' || !/[/+]json$/.test(mediaType)) return null;
    let value: unknown;
    try {
      value = JSON.parse(response.body);
    } catch {
      return `the ${mediaType} body is not JSON: ${response.body.slice(0, 120)}`;
    }
    const statusUsed = responses[statusKey] ? statusKey : responses[family] ? family : 'default';
    const validate = this.validatorFor(response.routeUrl, response.method, statusUsed, mediaType);
    if (validate(value)) return null;
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '(root)'} ${e.message}`);
    return `the body does not match the schema of status ${response.status}: ${errors.join('; ')} (body: ${response.body.slice(0, 200)})`;
  }

  private validatorFor(routeUrl: string, method: string, status: string, mediaType: string): ValidateFunction {
    const item = this.doc.paths[documentPath(routeUrl)]!;
    const verb = item[method.toLowerCase()] ? method.toLowerCase() : 'get';
    const pointer = ['paths', documentPath(routeUrl), verb, 'responses', status, 'content', mediaType, 'schema'].map(escapePointer).join('/');
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi#/${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** The body of the answer that replaces a response that does not conform. */
  static violationBody(problem: string): string {
    return JSON.stringify({ detail: `response does not match /openapi.json: ${problem}`, code: 'OPENAPI_VIOLATION' });
  }
}

function bodyText(payload: unknown): string | null {
  if (payload === null || payload === undefined) return '';
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return null; // a stream: status and content type only
}

/**
 * Adds the check to an app before it is ready. Answers sent through Fastify are checked in `onSend`;
 * answers written straight to the socket (event streams, hijacked replies) when their head is written.
 */
export function instrumentApp(app: App): () => OpenApiConformance {
  let conformance: OpenApiConformance | undefined;
  const checker = () => (conformance ??= new OpenApiConformance(app.swagger() as unknown as OpenApiDocument));
  const checkedBySend = new WeakSet<FastifyRequest>();

  const record = (request: FastifyRequest, status: number, problem: string) => {
    checker().violations.push({ method: request.method, url: request.url, status, problem });
  };

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const routeUrl = request.routeOptions.url;
    if (!routeUrl) return;
    const raw = reply.raw;
    const writeHead = raw.writeHead.bind(raw) as (...args: unknown[]) => typeof raw;
    // Only replies that bypass onSend (hijacked: the event stream) are checked here, for status and content type.
    raw.writeHead = ((status: number, ...rest: unknown[]) => {
      if (!checkedBySend.has(request)) {
        const headers = rest.find((r) => r && typeof r === 'object') as Record<string, string> | undefined;
        const contentType = headers?.['content-type'] ?? (raw.getHeader('content-type') as string | undefined);
        const problem = checker().problemWith({ method: request.method, routeUrl, status, contentType, body: null });
        if (problem) record(request, status, problem);
      }
      return writeHead(status, ...rest);
    }) as typeof raw.writeHead;
  });

  app.addHook('onSend', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    checkedBySend.add(request);
    const routeUrl = request.routeOptions.url;
    if (!routeUrl) return payload;
    const status = reply.statusCode;
    const problem = checker().problemWith({
      method: request.method,
      routeUrl,
      status,
      contentType: reply.getHeader('content-type') as string | undefined,
      body: bodyText(payload),
    });
    if (!problem) return payload;
    record(request, status, problem);
    if (payload && typeof (payload as { destroy?: unknown }).destroy === 'function') (payload as { destroy(): void }).destroy();
    reply.code(VIOLATION_STATUS).header('content-type', 'application/json; charset=utf-8').removeHeader('content-length');
    return OpenApiConformance.violationBody(problem);
  });

  return checker;
}
