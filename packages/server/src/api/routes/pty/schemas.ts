/** Schemas of PTY sessions (terminals). */
import { Type, type Static } from 'typebox';
import { GuestPath } from '../../schemas/guest-path.ts';

const Dimension = (what: string, fallback: number) =>
  Type.Integer({ minimum: 1, maximum: 1000, default: fallback, description: `Terminal ${what}, 1 to 1000 (default ${fallback})` });

export const PtyCreateRequest = Type.Object(
  {
    cols: Type.Optional(Dimension('columns', 80)),
    rows: Type.Optional(Dimension('rows', 24)),
    command: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 65_536,
        description: 'Command line to run instead of an interactive shell (run with `<shell> -lc`); the terminal exits with it',
      }),
    ),
    shell: Type.Optional({ ...GuestPath('Absolute path of the shell (default /bin/bash), started as a login shell'), pattern: '^/' }),
    env: Type.Optional(
      Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' }), Type.String({ maxLength: 4096 }), {
        maxProperties: 64,
        description: "Environment on top of the session's env (TERM is xterm-256color unless set here)",
      }),
    ),
    cwd: Type.Optional(GuestPath('Working directory (default /root)')),
    scrollback_bytes: Type.Optional(
      Type.Integer({ minimum: 1024, maximum: 1_048_576, description: 'Recent output replayed to each new attachment (default 65536)' }),
    ),
  },
  { $id: 'PtyCreateRequest', title: 'PtyCreateRequest', additionalProperties: false },
);
export type PtyCreateBody = Static<typeof PtyCreateRequest>;

export const PtyResizeRequest = Type.Object(
  { cols: Type.Integer({ minimum: 1, maximum: 1000 }), rows: Type.Integer({ minimum: 1, maximum: 1000 }) },
  { $id: 'PtyResizeRequest', title: 'PtyResizeRequest', additionalProperties: false },
);

const terminalFields = {
  pty_id: Type.String(),
  session_id: Type.Union([Type.String(), Type.Null()]),
  vm_id: Type.String(),
  cols: Type.Integer(),
  rows: Type.Integer(),
  command: Type.Array(Type.String(), { description: 'The program and its arguments' }),
  cwd: Type.String(),
  pid: Type.Integer(),
  status: Type.Union([Type.Literal('running'), Type.Literal('exited')]),
  exit_code: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([Type.String(), Type.Null()], { description: 'The signal that ended it, e.g. SIGKILL' }),
  created_at: Type.String({ format: 'date-time' }),
  exited_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  attachments: Type.Integer({ description: 'WebSocket connections attached right now' }),
};

export const PtySession = Type.Object(
  {
    ...terminalFields,
    websocket_url: Type.String({ description: 'Where to attach (WebSocket): send X-API-Key/Authorization, or append ?token=<connect_token>' }),
    connect_token: Type.String({ description: 'Single-use attach token for clients that cannot set headers (browsers); a fresh one on every read' }),
    connect_token_expires_in: Type.Integer({ description: 'Seconds the connect token works' }),
  },
  { $id: 'PtySession', title: 'PtySession' },
);

export const PtySessionState = Type.Object(terminalFields, { $id: 'PtySessionState', title: 'PtySessionState' });

export const PtySessionList = Type.Object({ sessions: Type.Array(Type.Ref('PtySessionState')) }, { $id: 'PtySessionList', title: 'PtySessionList' });

export const PTY_SCHEMAS = [PtyCreateRequest, PtyResizeRequest, PtySession, PtySessionState, PtySessionList];
