/**
 * /v1/sessions/{id}/contexts…: a session's Python contexts (E2B's code contexts). Each is an interpreter of its own
 * in the session's VM, with variables and imports of its own; run code in one with `execute(code, { contextId })`.
 * Every session has its `default` context (what an execute without `contextId` uses).
 */
import type { Schemas } from '../api-types.ts';
import type { Transport } from '../transport.ts';

export type ContextInfo = Schemas['ContextInfo'];

export interface ContextCreateOptions {
  /** Where the context's interpreter starts (default `/root`). */
  cwd?: string;
  signal?: AbortSignal;
}

export class Contexts {
  constructor(private readonly transport: Transport) {}

  /** Makes a context in the session; its interpreter starts with its first run (at most 16 per session). */
  create(sessionId: string, options: ContextCreateOptions = {}): Promise<ContextInfo> {
    return this.transport.call('/v1/sessions/{session_id}/contexts', 'post', {
      params: { session_id: sessionId },
      json: options.cwd === undefined ? {} : { cwd: options.cwd },
      kind: 'session',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  }

  /** The session's contexts, `default` first. */
  async list(sessionId: string, options: { signal?: AbortSignal } = {}): Promise<ContextInfo[]> {
    return (await this.transport.call('/v1/sessions/{session_id}/contexts', 'get', { params: { session_id: sessionId }, kind: 'session', ...options }))
      .contexts;
  }

  get(sessionId: string, contextId: string, options: { signal?: AbortSignal } = {}): Promise<ContextInfo> {
    return this.transport.call('/v1/sessions/{session_id}/contexts/{context_id}', 'get', {
      params: { session_id: sessionId, context_id: contextId },
      ...options,
    });
  }

  /** Ends the context's interpreter: its variables and imports are gone; the next run starts afresh. */
  restart(sessionId: string, contextId: string, options: { signal?: AbortSignal } = {}): Promise<ContextInfo> {
    return this.transport.call('/v1/sessions/{session_id}/contexts/{context_id}/restart', 'post', {
      params: { session_id: sessionId, context_id: contextId },
      ...options,
    });
  }

  /** Deletes a context you made (not `default`: restart that one) and ends its interpreter. */
  async delete(sessionId: string, contextId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.transport.call('/v1/sessions/{session_id}/contexts/{context_id}', 'delete', {
      params: { session_id: sessionId, context_id: contextId },
      ...options,
    });
  }
}
