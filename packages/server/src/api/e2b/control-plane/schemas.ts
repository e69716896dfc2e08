/** Request shapes of E2B's control plane (its `spec/openapi.yml`), as the published SDK sends them. */
import { Type } from 'typebox';
import { SourceName } from '../../routes/sessions/schemas.ts';

/** A sandbox id: a session id (UUID). Anything else is no sandbox of anyone's (404, not a validation error). */
export const SandboxParams = Type.Object({ sandboxID: Type.String({ minLength: 1, maxLength: 128 }) });

const StringMap = Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.String({ maxLength: 4096 }), { maxProperties: 64 });

/** E2B's timeouts are seconds; sandboxd's lifetimes start at 20 s and end at 30 days. */
export const TimeoutSeconds = Type.Integer({ minimum: 0, maximum: 2_592_000 });

export const NewSandbox = Type.Object({
  templateID: Type.String({ minLength: 1, maxLength: 128 }),
  timeout: Type.Optional(TimeoutSeconds),
  metadata: Type.Optional(StringMap),
  envVars: Type.Optional(StringMap),
  autoPause: Type.Optional(Type.Boolean()),
  autoPauseMemory: Type.Optional(Type.Boolean()),
  autoResume: Type.Optional(Type.Object({ enabled: Type.Boolean() })),
  secure: Type.Optional(Type.Boolean()),
  allow_internet_access: Type.Optional(Type.Boolean()),
  network: Type.Optional(
    Type.Object({
      allowPublicTraffic: Type.Optional(Type.Boolean()),
      allowOut: Type.Optional(Type.Array(Type.String({ maxLength: 253 }), { maxItems: 256 })),
      denyOut: Type.Optional(Type.Array(Type.String({ maxLength: 253 }), { maxItems: 256 })),
      // Declared so that they are refused (create.ts), not silently dropped by validation.
      egressProxy: Type.Optional(Type.Unknown()),
      rules: Type.Optional(Type.Unknown()),
      maskRequestHost: Type.Optional(Type.Unknown()),
      httpsPorts: Type.Optional(Type.Unknown()),
    }),
  ),
  mcp: Type.Optional(Type.Unknown()),
  iam: Type.Optional(Type.Unknown()),
  volumeMounts: Type.Optional(Type.Array(Type.Object({ name: Type.String(), path: Type.String() }), { maxItems: 16 })),
});

/** GET /v2/sandboxes: `state` comma-joined, `metadata` one URL-encoded `k=v&k2=v2`, a page of 1 to 100. */
export const ListSandboxesQuery = Type.Object({
  state: Type.Optional(Type.String({ maxLength: 64 })),
  metadata: Type.Optional(Type.String({ maxLength: 16_384 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  nextToken: Type.Optional(Type.String({ maxLength: 512 })),
  template: Type.Optional(Type.String({ maxLength: 128 })),
  startedAfter: Type.Optional(Type.String({ maxLength: 64 })),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
});

/** GET /sandboxes (v1): running sandboxes only, with the same `metadata` filter. */
export const ListSandboxesV1Query = Type.Object({ metadata: Type.Optional(Type.String({ maxLength: 16_384 })) });

/** POST /sandboxes/{id}/timeout: the sandbox ends `timeout` seconds from now. */
export const SetTimeoutBody = Type.Object({ timeout: TimeoutSeconds });

/** POST /sandboxes/{id}/refreshes: the sandbox lives at least `duration` more seconds (E2B: at most an hour). */
export const RefreshBody = Type.Object({ duration: Type.Optional(Type.Integer({ minimum: 0, maximum: 3600 })) });

/** POST /sandboxes/{id}/pause: `memory` false is E2B's filesystem-only pause. */
export const PauseBody = Type.Object({ memory: Type.Optional(Type.Boolean()) });

/** POST /v2/sandboxes/{id}/connect (and the deprecated /connect and /resume): its new timeout, seconds. */
export const ConnectBody = Type.Object({
  timeout: Type.Optional(TimeoutSeconds),
  memory: Type.Optional(Type.Boolean()),
  autoPause: Type.Optional(Type.Boolean()),
});

/** GET /sandboxes/{id}/metrics: a window in Unix seconds. */
export const MetricsQuery = Type.Object({
  start: Type.Optional(Type.Integer({ minimum: 0 })),
  end: Type.Optional(Type.Integer({ minimum: 0 })),
});

/** POST /sandboxes/{id}/snapshots: its name is a sandboxd snapshot name (what `Sandbox.create(name)` starts from). */
export const CreateSnapshotBody = Type.Object({ name: Type.Optional(SourceName) });

/** GET /snapshots: filters and a page of 1 to 100. */
export const ListSnapshotsQuery = Type.Object({
  sandboxID: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  nextToken: Type.Optional(Type.String({ maxLength: 512 })),
});

/** DELETE /templates/{templateID}: how the SDK deletes a snapshot (by the id it was given: its name). */
export const TemplateParams = Type.Object({ templateID: Type.String({ minLength: 1, maxLength: 128 }) });

/**
 * For operations whose body E2B's spec makes optional (pause, refreshes, connect): a request without one is
 * validated as `{}` (Fastify validates an absent body as `undefined`, which no object schema accepts).
 */
export async function absentBodyAsEmpty(request: { body: unknown }): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
