/**
 * How the in-sandbox daemon's handlers learn who called: the envd plugin admits every request in an `onRequest`
 * hook (api/e2b/sandbox-traffic/access.ts) and hands the caller to Connect's handlers as a context value.
 */
import { createContextKey, type HandlerContext } from '@connectrpc/connect';
import { Code, ConnectError } from '@connectrpc/connect';
import type { SandboxCaller } from '../sandbox-traffic/access.ts';
import { DEFAULT_USER } from '../wire.ts';

export const CALLER = createContextKey<SandboxCaller | undefined>(undefined, { description: 'the admitted sandbox caller' });
/** Aborted when the server closes: its open streams (a command's output, a watch) end then, not when their command does. */
export const SHUTDOWN = createContextKey<AbortSignal | undefined>(undefined, { description: 'the server is closing' });

/** The signal a stream follows: the client going away, or the server closing. */
export function streamSignal(context: HandlerContext): AbortSignal {
  const shutdown = context.values.get(SHUTDOWN);
  return shutdown ? AbortSignal.any([context.signal, shutdown]) : context.signal;
}

export function callerOf(context: HandlerContext): SandboxCaller {
  const caller = context.values.get(CALLER);
  // The plugin's hook admits every request before a handler runs; reaching here without one is a wiring error.
  if (!caller) throw new ConnectError('no sandbox caller', Code.Internal);
  return caller;
}

/**
 * The account a request runs as: E2B's SDK names it as the user of a Basic Authorization header (`user:`), and
 * leaves it out for the default (`user`). The name is checked by the agent against the VM's accounts.
 */
export function userOf(context: HandlerContext): string {
  const header = context.requestHeader.get('authorization');
  const match = header ? /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim()) : null;
  if (!match) return DEFAULT_USER;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const name = decoded.split(':', 1)[0]!;
  if (!/^[a-z_][a-z0-9_-]{0,31}$/.test(name)) throw new ConnectError(`invalid user name ${JSON.stringify(name)}`, Code.InvalidArgument);
  return name;
}

/** The keep-alive interval the SDK asks for (`Keepalive-Ping-Interval`, seconds), bounded; null: none. */
export function keepaliveMsOf(context: HandlerContext): number | null {
  const value = Number(context.requestHeader.get('keepalive-ping-interval'));
  if (!Number.isFinite(value) || value <= 0) return null;
  return Math.min(Math.max(value, 1), 300) * 1000;
}
