/** Schemas of a session's Python contexts (core/python-contexts.ts). */
import { Type } from 'typebox';
import type { ContextView } from '../../../core/python-contexts.ts';
import { GuestPath } from '../../schemas/guest-path.ts';

export const ContextParams = Type.Object({ session_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const OneContextParams = Type.Object({
  session_id: Type.String({ minLength: 1, maxLength: 64 }),
  context_id: Type.String({ minLength: 1, maxLength: 64 }),
});

export const ContextCreateRequest = Type.Object(
  { cwd: Type.Optional(GuestPath("Where the context's interpreter starts (default /root); a directory that is not there makes its first run fail")) },
  { additionalProperties: false, $id: 'ContextCreateRequest', title: 'ContextCreateRequest' },
);

export const ContextInfo = Type.Object(
  {
    id: Type.String({ description: "`default` for the session's own interpreter; `ctx_…` for one you made" }),
    session_id: Type.String(),
    language: Type.Literal('python'),
    cwd: Type.String({ description: 'Where its interpreter starts' }),
    created_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Null for the default context' }),
  },
  { $id: 'ContextInfo', title: 'ContextInfo' },
);

export const ContextList = Type.Object({ contexts: Type.Array(Type.Ref('ContextInfo')) }, { $id: 'ContextList', title: 'ContextList' });

export const CONTEXT_SCHEMAS = [ContextCreateRequest, ContextInfo, ContextList];

/** A context as the wire names its fields. */
export function toContextInfo(context: ContextView) {
  return { id: context.id, session_id: context.sessionId, language: context.language, cwd: context.cwd, created_at: context.createdAt };
}
