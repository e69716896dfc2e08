/** Request shapes of E2B's control plane (its `spec/openapi.yml`), as the published SDK sends them. */
import { Type } from 'typebox';

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
    }),
  ),
  mcp: Type.Optional(Type.Unknown()),
  iam: Type.Optional(Type.Unknown()),
  volumeMounts: Type.Optional(Type.Array(Type.Object({ name: Type.String(), path: Type.String() }), { maxItems: 16 })),
});
