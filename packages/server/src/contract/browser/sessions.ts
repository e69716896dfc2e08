/** Browser sessions on the wire: create, read, list, close; and what the service offers (capabilities, auth test). */
import { Type, type Static } from 'typebox';
import { DateTime, DateTimeOrNull, StringEnum, StringOrNull } from '../kit.ts';
import { ApiKeyField, Height, SCREENSHOT_FORMATS, SESSION_STATUSES, SessionId, UserAgent, WAIT_CONDITIONS, WAIT_UNTIL, Width } from './common.ts';

export const BrowserSessionCreateRequest = Type.Object(
  {
    viewport_width: Type.Optional(Width),
    viewport_height: Type.Optional(Height),
    user_agent: UserAgent,
    idle_timeout_seconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 86_400,
        description:
          "Seconds without an interaction after which the session is closed; the default and the largest value allowed are the server's (see `GET /v1/browser/capabilities`)",
      }),
    ),
    api_key: ApiKeyField,
  },
  { $id: 'BrowserSessionCreateRequest', title: 'BrowserSessionCreateRequest' },
);
export type BrowserSessionCreateRequest = Static<typeof BrowserSessionCreateRequest>;

export const BrowserSessionResponse = Type.Object(
  {
    session_id: Type.String(),
    status: StringEnum(SESSION_STATUSES, {
      description: '`active` until it is closed (DELETE), idle past its idle timeout, past its lifetime, or its VM ends (`failed`)',
    }),
    viewport_width: Type.Integer(),
    viewport_height: Type.Integer(),
    user_agent: StringOrNull,
    created_at: DateTime,
    last_activity: DateTime,
    expires_at: Type.String({
      format: 'date-time',
      description: 'When the session closes unless used again (idle timeout), never later than its lifetime allows',
    }),
    idle_timeout_seconds: Type.Integer(),
    url: Type.String({ description: 'The page the session shows now (about:blank at first)' }),
    pages_visited: Type.Integer(),
    screenshots_taken: Type.Integer(),
    closed_at: DateTimeOrNull,
    end_reason: Type.Union([Type.String(), Type.Null()], {
      description: 'Why it ended: `closed` (DELETE), `idle`, `lifetime`, `vm_ended` or `server_shutdown`; null while active',
    }),
  },
  { $id: 'BrowserSessionResponse', title: 'BrowserSessionResponse' },
);
export type BrowserSessionResponse = Static<typeof BrowserSessionResponse>;

export const BrowserSessionListResponse = Type.Object(
  { sessions: Type.Array(Type.Ref('BrowserSessionResponse') as unknown as typeof BrowserSessionResponse) },
  { $id: 'BrowserSessionListResponse', title: 'BrowserSessionListResponse' },
);
export type BrowserSessionListResponse = Static<typeof BrowserSessionListResponse>;

export const BrowserSessionCloseResponse = Type.Object(
  { success: Type.Literal(true), session_id: Type.String(), message: Type.String() },
  { $id: 'BrowserSessionCloseResponse', title: 'BrowserSessionCloseResponse' },
);
export type BrowserSessionCloseResponse = Static<typeof BrowserSessionCloseResponse>;

export const BrowserSessionIdParams = Type.Object({ session_id: SessionId });

export const BrowserCapabilities = Type.Object(
  {
    engine: Type.Literal('chromium'),
    version: Type.String({ description: "The browser's version" }),
    interactions: Type.Array(Type.String(), { description: 'The interaction operations served' }),
    screenshot_formats: Type.Array(StringEnum(SCREENSHOT_FORMATS)),
    wait_conditions: Type.Array(StringEnum(WAIT_CONDITIONS)),
    wait_until: Type.Array(StringEnum(WAIT_UNTIL)),
    max_viewport: Type.Object({ width: Type.Integer(), height: Type.Integer() }),
    default_viewport: Type.Object({ width: Type.Integer(), height: Type.Integer() }),
    idle_timeout_seconds: Type.Integer({ description: 'The default idle timeout of a session' }),
    max_session_seconds: Type.Integer({ description: 'The longest a session lives, used or not' }),
    max_sessions: Type.Integer({ description: 'Open sessions your plan allows' }),
    warm_pool_size: Type.Integer({ description: 'Browsers kept started ahead of need' }),
  },
  { $id: 'BrowserCapabilities', title: 'BrowserCapabilities' },
);
export type BrowserCapabilities = Static<typeof BrowserCapabilities>;

export const BrowserAuthTestRequest = Type.Object(
  { api_key: ApiKeyField },
  { $id: 'BrowserAuthTestRequest', title: 'BrowserAuthTestRequest', description: 'Optional: the key may come in a header instead' },
);

export const BrowserAuthTestResponse = Type.Object(
  {
    success: Type.Literal(true),
    authenticated: Type.Literal(true),
    user_id: Type.Integer(),
    username: Type.String(),
    plan: Type.String(),
    browser_available: Type.Boolean({ description: 'A browser can be started now' }),
    message: Type.String(),
  },
  { $id: 'BrowserAuthTestResponse', title: 'BrowserAuthTestResponse' },
);
export type BrowserAuthTestResponse = Static<typeof BrowserAuthTestResponse>;
