/** The served OpenAPI document (generated from the route schemas) and the interactive docs at /docs. */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { App } from './types.ts';

export const API_VERSION = '0.1.0';

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

Operations marked "Not implemented yet" answer 501 with code \`NOT_IMPLEMENTED\` until the feature lands.`;

export async function registerOpenApi(app: App, publicUrl: string): Promise<void> {
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
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
