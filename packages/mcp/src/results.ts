/**
 * What tools hand back to the model: text, images, and errors that carry the API's code. Every tool result
 * passes through here, so the model sees one format whatever the tool.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SandboxdError } from '@sandboxd/sdk';

/** A failure found on this side (a path that is not a directory…), with a code of the same kind as the API's. */
export class ToolFailure extends Error {
  override name = 'ToolFailure';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** A successful result of one text block (and, where useful to programs, the same facts as JSON). */
export function textResult(text: string, structured?: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) };
}

/** A successful result with an image (base64) and a caption. */
export function imageResult(base64: string, mimeType: string, caption: string): CallToolResult {
  return {
    content: [
      { type: 'image', data: base64, mimeType },
      { type: 'text', text: caption },
    ],
  };
}

/**
 * A tool error: `isError: true` with the API's error code, HTTP status and message, so the model can tell
 * "not found" from "rate limited" from "bad input" and act on it. Never thrown: returned.
 */
export function errorResult(error: unknown): CallToolResult {
  if (error instanceof SandboxdError) {
    const code = error.code ?? error.name;
    const status = error.status !== undefined ? ` (HTTP ${error.status})` : '';
    const hint = hintFor(error);
    const text = `Error ${code}${status}: ${error.message}${hint ? `\n${hint}` : ''}`;
    return {
      content: [{ type: 'text', text }],
      structuredContent: {
        error: {
          code,
          status: error.status ?? null,
          message: error.message,
          type: error.name,
          ...(error.requestId ? { request_id: error.requestId } : {}),
        },
      },
      isError: true,
    };
  }
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof ToolFailure ? error.code : 'CLIENT_ERROR';
  return {
    content: [{ type: 'text', text: `Error ${code}: ${message}` }],
    structuredContent: { error: { code, status: null, message, type: error instanceof Error ? error.name : 'Error' } },
    isError: true,
  };
}

/** What the model can do about an error, where the code alone does not say. */
function hintFor(error: SandboxdError): string | null {
  switch (error.status) {
    case 401:
      return 'The credentials of this MCP server are missing or no longer valid: log in again (`sandbox login`) or set SANDBOXD_API_KEY.';
    case 403:
      return 'That sandbox belongs to someone else.';
    case 404: {
      const operation = error.operation ?? '';
      if (operation === 'POST /download') return 'No such file in that sandbox, or no such sandbox among yours: list_files shows what is there.';
      if (operation.includes('/v1/browser/')) return 'No such open browser session among yours (it may have closed when idle): browser_open starts one.';
      if (operation === 'POST /v1/sessions/session') return null;
      return 'No sandbox with that session_id among yours: list_sandboxes shows your sandboxes.';
    }
    case 429:
      return error.code === 'QUOTA_EXCEEDED'
        ? 'Your plan allows no more at once: kill a sandbox (kill_sandbox) or close a browser session you no longer need.'
        : 'Too many requests: wait a little and try again.';
    default:
      return null;
  }
}

/** The result of a tool, or the error it ended with: handlers never throw out of here. */
export async function guarded(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    return errorResult(error);
  }
}

/** Text cut to `maxChars`: the start and the end are kept (the end usually holds the error), the middle is dropped. */
export function capText(text: string, maxChars: number): { text: string; cut: number } {
  if (text.length <= maxChars) return { text, cut: 0 };
  const head = Math.floor(maxChars * 0.6);
  const tail = maxChars - head;
  const cut = text.length - head - tail;
  return { text: `${text.slice(0, head)}\n… [${cut} characters cut here] …\n${text.slice(text.length - tail)}`, cut };
}
