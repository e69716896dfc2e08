/** GET /v1/sessions/sandboxes: the caller's sandboxes, filtered by metadata containment. */
import { Type } from 'typebox';
import { InputError } from '../../../core/errors.ts';
import { principalOf } from '../../authentication.ts';
import { parseBoundedJson } from '../../json-body.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

/** Parses the `metadata` query parameter: a JSON object whose values are strings (numbers and booleans are compared as text). */
function parseMetadataFilter(raw: string | undefined): Record<string, string> | null {
  if (raw === undefined || raw === '') return null;
  const problem = (msg: string, type: string) => new InputError([{ loc: ['query', 'metadata'], msg, type }]);
  let parsed: unknown;
  try {
    parsed = parseBoundedJson(raw, ['query', 'metadata']);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw problem('Invalid JSON: metadata must be a JSON object such as {"team":"search"}', 'json_invalid');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw problem('metadata must be a JSON object of key/value pairs', 'dict_type');
  const filter: Record<string, string> = {};
  for (const [key, value] of Object.entries(parsed as Record<string, unknown>)) {
    if (!['string', 'number', 'boolean'].includes(typeof value)) throw problem(`metadata.${key} must be a string, number or boolean`, 'string_type');
    filter[key] = String(value);
  }
  return filter;
}

export function registerListSandboxes(app: App, { services, requireAuth }: RouteContext): void {
  app.get(
    '/v1/sessions/sandboxes',
    {
      schema: {
        tags: ['sessions'],
        summary: "List the caller's sandboxes",
        description: 'One entry per VM, newest first. `metadata` is a JSON object; a sandbox matches when its session metadata contains every pair.',
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          metadata: Type.Optional(Type.String({ description: 'JSON object of key/value filters, matched by containment' })),
          limit: Type.Integer({ minimum: 1, maximum: 1000, default: 100 }),
        }),
        response: authedResponses({ 200: Type.Array(Type.Ref('SandboxInfo')) }),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const sandboxes = await services.sandbox.sessions.listSandboxes(principalOf(request), {
        metadata: parseMetadataFilter(request.query.metadata),
        limit: request.query.limit,
      });
      return sandboxes.map(({ vm, metadata }) => ({
        sandbox_id: vm.id,
        template_id: vm.templateId,
        name: metadata.name ?? `sandbox-${vm.templateId}`,
        metadata,
        started_at: vm.startedAt ?? vm.createdAt,
        end_at: vm.status === 'killed' ? vm.endedAt : vm.expiresAt,
        status: vm.status,
        session_id: vm.sessionId,
        vcpu_count: vm.vcpuCount,
        memory_mb: vm.memoryMb,
      }));
    },
  );
}
