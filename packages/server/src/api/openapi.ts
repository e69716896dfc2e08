/** The served OpenAPI document (generated from the route schemas) and the interactive docs at /docs. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { registerApiReference } from './api-reference.ts';
import { errorRef } from './schemas/common.ts';
import type { App } from './types.ts';
import { API_VERSION } from '../version.ts';

const DESCRIPTION = `sandboxd runs short-lived, isolated microVMs ("sandboxes") for AI agents and developers.

**Authentication.** Send an API key in the \`X-API-Key\` header (or as \`Authorization: Bearer <key>\`; request
bodies that have an \`api_key\` field may carry it there). Bearer tokens from \`POST /v1/auth/token\` (OAuth2
password flow, form \`username\` + \`password\`) work too. Missing or invalid credentials answer 401 with a
\`WWW-Authenticate\` header, before the request body is read. Without a header credential, at most
SANDBOXD_UNAUTHENTICATED_BODY_LIMIT_BYTES (default 2 MiB) of a body is read before its \`api_key\` authenticates
it (413 beyond).

**Bodies.** JSON bodies may be nested at most 64 levels deep and hold at most 10,000 values (422 \`json_invalid\`
beyond, before parsing).

**Errors.** Invalid input answers 422 with \`{"detail":[{"loc":[...],"msg":"...","type":"..."}]}\`; every other error
is \`{"detail":"...","code":"..."}\` with a stable code (see docs/errors.md in the repository).

**The API reference** as one page: [/docs/reference](/docs/reference), generated from this document; the guides
are in the repository's docs/.`;

/** Methods whose bodies Fastify reads (and can refuse before any handler runs). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Declares the answers every operation that reads a body may give before its own code runs, so the document
 * lists every status the server sends: a body that cannot be read (400: truncated, a wrong Content-Length,
 * a malformed multipart form), one too large (413), one of a type the operation does not take (415).
 * Operations that declare a catch-all (`default`: the preview proxy) are left as they are.
 */
function declareBodyErrors(app: App): void {
  app.addHook('onRoute', (route) => {
    const response = route.schema?.response as Record<string, unknown> | undefined;
    if (!response || route.schema?.hide || 'default' in response) return;
    if (![route.method].flat().some((method) => BODY_METHODS.has(method))) return;
    response[400] ??= errorRef('The body could not be read: truncated, a wrong Content-Length, or a malformed form');
    response[413] ??= errorRef(
      'The body is larger than allowed (SANDBOXD_BODY_LIMIT_BYTES; SANDBOXD_UNAUTHENTICATED_BODY_LIMIT_BYTES before a body credential is read)',
    );
    response[415] ??= errorRef('The Content-Type is not one the operation accepts');
  });
}

type SchemaObject = {
  $ref?: string;
  oneOf?: SchemaObject[];
  discriminator?: { propertyName: string; mapping?: Record<string, string> };
  properties?: Record<string, { const?: unknown; enum?: unknown[] }>;
};

/**
 * States the mapping of every discriminator (a render's actions: `{"type":"click"}` is a
 * `BrowserRenderClickAction`). Without one, OpenAPI reads the tag values as component names, and generated clients
 * would expect `"type":"BrowserRenderClickAction"`; Ajv, which validates with the same schemas, takes no mapping,
 * so the document gets it here, read from each member's one-value tag. The components are replaced, not changed:
 * the validator's schemas stay as they are.
 */
function mapDiscriminators(document: { components?: { schemas?: Record<string, SchemaObject> } }): void {
  const schemas = document.components?.schemas ?? {};
  for (const [name, schema] of Object.entries(schemas)) {
    const discriminator = schema.discriminator;
    if (!discriminator || discriminator.mapping || !schema.oneOf) continue;
    const mapping: Record<string, string> = {};
    for (const member of schema.oneOf) {
      const tag = member.$ref ? schemas[member.$ref.split('/').pop()!]?.properties?.[discriminator.propertyName] : undefined;
      const value = tag?.const ?? (tag?.enum?.length === 1 ? tag.enum[0] : undefined);
      if (typeof value === 'string' && member.$ref) mapping[value] = member.$ref;
    }
    schemas[name] = { ...schema, discriminator: { ...discriminator, mapping } };
  }
}

export async function registerOpenApi(app: App, publicUrl: string): Promise<void> {
  declareBodyErrors(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'sandboxd', version: API_VERSION, description: DESCRIPTION },
      servers: [{ url: publicUrl }],
      components: {
        securitySchemes: {
          OAuth2PasswordBearer: { type: 'oauth2', flows: { password: { tokenUrl: '/v1/auth/token', scopes: {} } } },
          APIKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
    // Shared schemas keep their own names as OpenAPI components.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    // Fastify's wildcard segment is the spec's {path}.
    transform: ({ schema, url }) => ({ schema, url: url.replace(/\/\*$/, '/{path}') }),
    transformObject: (documentObject) => {
      const document = 'openapiObject' in documentObject ? documentObject.openapiObject : documentObject.swaggerObject;
      mapDiscriminators(document as Parameters<typeof mapDiscriminators>[0]);
      return document;
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  registerApiReference(app);
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
