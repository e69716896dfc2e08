/**
 * The arguments of each agent operation another node may ask of this one (agent-rpc-server.ts), as schemas:
 * the owner checks the first message of every operation against its op's schema before the agent sees it. The
 * message is signed (its sha256 is in the handshake's signature), so a node that is not of the cluster cannot
 * choose it; the check is there so that even a signed message is the shape the operation takes and nothing
 * else (no stray field reaches the agent, no string where a number goes). The shapes are the client side's
 * own (`RemoteGuestAgent`), tied to the GuestAgent types at compile time (`AgentArgsChecks` at the end).
 */
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { ExecRequest, PythonRunRequest } from '@sandboxd/agent/protocol';
import { InputError } from '../core/errors.ts';
import type { PtyCreateOptions } from '../core/vm-engine.ts';

// Sizes are bounded by the socket's largest message (64 MiB), as on the public routes by the body limit.
const Closed = { additionalProperties: false } as const;
const GuestPath = Type.String({ minLength: 1 });
const Env = Type.Record(Type.String(), Type.String());
const Argv = Type.Array(Type.String());
const Mode = Type.Integer({ minimum: 0, maximum: 0o7777 });
const PtyId = Type.Object({ id: Type.String({ minLength: 1, maxLength: 128 }) }, Closed);
const Dimension = Type.Integer({ minimum: 1, maximum: 10_000 });

const Exec = Type.Object(
  {
    argv: Type.Optional(Argv),
    command: Type.Optional(Type.String()),
    shell: Type.Optional(Argv),
    env: Type.Optional(Env),
    cwd: Type.Optional(GuestPath),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 0 })),
    stdin: Type.Optional(Type.Boolean()),
    user: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
    keep: Type.Optional(Type.Boolean()),
    info: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  Closed,
);
const Offset = Type.Integer({ minimum: 0 });
const AttachExec = Type.Object(
  { pid: Type.Integer({ minimum: 1 }), from: Type.Object({ stdoutOffset: Offset, stderrOffset: Offset }, Closed), stdin: Type.Boolean() },
  Closed,
);
const RunPython = Type.Object(
  {
    contextId: Type.String({ minLength: 1, maxLength: 128 }),
    code: Type.String(),
    timeoutMs: Type.Optional(Type.Integer({ minimum: 0 })),
    spare: Type.Optional(Type.Boolean()),
    cwd: Type.Optional(GuestPath),
  },
  Closed,
);
const CreatePty = Type.Object(
  {
    cols: Dimension,
    rows: Dimension,
    argv: Argv,
    env: Type.Optional(Env),
    cwd: Type.Optional(GuestPath),
    scrollbackBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  Closed,
);
const PathOnly = Type.Object({ path: GuestPath }, Closed);

/** The operations another node may run on a VM of this node, each with its arguments' schema below. */
export const AGENT_OPS = [
  'exec',
  'attachExec',
  'listKeptExecs',
  'runPython',
  'resetPython',
  'writeFile',
  'extractTar',
  'readFile',
  'stat',
  'listDir',
  'mkdir',
  'remove',
  'usage',
  'openTunnel',
  'createPty',
  'listPtys',
  'getPty',
  'resizePty',
  'killPty',
  'attachPty',
] as const;
export type AgentOp = (typeof AGENT_OPS)[number];

/** The schema of each operation's arguments message (`null` for the operations that take none). */
export const AGENT_OP_ARGS = {
  exec: Exec,
  attachExec: AttachExec,
  listKeptExecs: Type.Null(),
  runPython: RunPython,
  resetPython: Type.Object({ contextId: RunPython.properties.contextId }, Closed),
  writeFile: Type.Object({ path: GuestPath, options: Type.Object({ mode: Type.Optional(Mode) }, Closed) }, Closed),
  extractTar: Type.Object({ directory: GuestPath, options: Type.Object({ gzip: Type.Optional(Type.Boolean()) }, Closed) }, Closed),
  readFile: PathOnly,
  stat: PathOnly,
  listDir: PathOnly,
  mkdir: Type.Object({ path: GuestPath, options: Type.Object({ parents: Type.Optional(Type.Boolean()), mode: Type.Optional(Mode) }, Closed) }, Closed),
  remove: Type.Object({ path: GuestPath, options: Type.Object({ recursive: Type.Optional(Type.Boolean()) }, Closed) }, Closed),
  usage: Type.Null(),
  openTunnel: Type.Object({ port: Type.Integer({ minimum: 1, maximum: 65_535 }) }, Closed),
  createPty: CreatePty,
  listPtys: Type.Null(),
  getPty: PtyId,
  resizePty: Type.Object({ id: PtyId.properties.id, cols: Dimension, rows: Dimension }, Closed),
  killPty: PtyId,
  attachPty: PtyId,
} as const satisfies Record<AgentOp, TSchema>;

/**
 * The arguments of operation `op`, checked; an InputError (422, naming the first problem) otherwise. Fields the
 * operation does not take are dropped first (a sender a version ahead may add one), never passed on.
 */
export function checkAgentArgs<K extends AgentOp>(op: K, args: unknown): Static<(typeof AGENT_OP_ARGS)[K]> {
  const schema: TSchema = AGENT_OP_ARGS[op];
  const cleaned = Value.Clean(schema, args);
  if (Value.Check(schema, cleaned)) return cleaned as Static<(typeof AGENT_OP_ARGS)[K]>;
  const first = Value.Errors(schema, cleaned)[0];
  throw new InputError([
    { loc: ['args', ...(first?.instancePath ?? '').split('/').filter(Boolean)], msg: `${op} arguments: ${first?.message ?? 'bad shape'}`, type: 'value_error' },
  ]);
}

/** True when A and B are assignable both ways. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Expect<T extends true> = T;

/** A compile error here means an argument schema and the type the agent takes disagree. */
export type AgentArgsChecks = [
  Expect<Same<Static<typeof Exec>, ExecRequest>>,
  Expect<Same<Static<typeof RunPython>, PythonRunRequest>>,
  Expect<Same<Static<typeof CreatePty>, PtyCreateOptions>>,
];
