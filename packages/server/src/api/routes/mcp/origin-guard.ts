/**
 * The MCP Streamable HTTP transport asks servers to validate `Origin` (DNS rebinding): a page of another site whose
 * name was re-pointed at this server sends the browser's `Origin: http://that-site`, while its `Host` may be
 * anything the attacker chose, so the check compares with the configured public URL, never with `Host`. Clients
 * that are not browsers send no `Origin` and pass.
 */
import type { onRequestAsyncHookHandler } from 'fastify';
import { forbidden } from '../../../core/errors.ts';

/** Whether an `Origin` header value names exactly the origin of `publicUrl`. */
export function isOwnOrigin(origin: string, publicUrl: string): boolean {
  try {
    // "null" (an opaque origin) and anything unparsable are not ours.
    return new URL(origin).origin === new URL(publicUrl).origin && origin !== 'null';
  } catch {
    return false;
  }
}

/** An onRequest hook that answers 403 to a request whose `Origin` is present and is not `publicUrl`'s origin. */
export function mcpOriginGuard(publicUrl: string): onRequestAsyncHookHandler {
  return async (request) => {
    const origin = request.headers.origin;
    if (origin === undefined || isOwnOrigin(origin, publicUrl)) return;
    throw forbidden(
      `MCP requests from a web page of another origin (${origin.slice(0, 200)}) are refused; this server's origin is ${new URL(publicUrl).origin}`,
    );
  };
}
