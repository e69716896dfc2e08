/**
 * Request shapes of the code interpreter's API (port 49999), as `@e2b/code-interpreter` sends them (snake_case
 * fields, as E2B's server names them). `null` is accepted wherever the SDK may send it for "not given".
 */
import { Type } from 'typebox';

/** 64 KiB: what an execution keeps of its source (longer code would run but not be recorded whole). */
const MAX_CODE_CHARS = 64 * 1024;

const EnvVars = Type.Record(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.String({ maxLength: 4096 }), {
  maxProperties: 64,
});

/** `POST /execute`. */
export const ExecuteBody = Type.Object({
  code: Type.String({ maxLength: MAX_CODE_CHARS }),
  context_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 64 }), Type.Null()])),
  language: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
  env_vars: Type.Optional(Type.Union([EnvVars, Type.Null()])),
});

/** `POST /contexts` (the SDK sends `{}` when neither is given). */
export const NewContextBody = Type.Union([
  Type.Object({
    language: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
    cwd: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 4096 }), Type.Null()])),
  }),
  Type.Null(),
]);

/** A context named in a path: sandboxd's context ids (`ctx_…`) or `default`; anything else is simply not found. */
export const ContextParams = Type.Object({ contextId: Type.String({ minLength: 1, maxLength: 64 }) });
