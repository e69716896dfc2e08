/**
 * Where requests for a sandbox's ports come in, and where they go. E2B's SDK reaches a sandbox in two ways:
 * - at one base URL (`E2B_SANDBOX_URL`, here `<public URL>/e2b/sandbox`), naming the sandbox and port in the
 *   `E2b-Sandbox-Id` and `E2b-Sandbox-Port` headers;
 * - at `{port}-{sandboxID}.<app domain>` (`getHost(port)`), the host name naming both.
 * Fastify's `rewriteUrl` (synchronous, before routing) sends both to internal routes by port: the in-sandbox daemon
 * (envd), the code interpreter, or the sandbox's own app. What the request named is kept beside the request (a
 * WeakMap): the internal routes answer 404 to a request that did not come through here.
 */
import type { IncomingMessage } from 'node:http';
import { CODE_INTERPRETER_PORT, ENVD_PORT } from '../wire.ts';

/** The base URL's path (`E2B_SANDBOX_URL` is the public URL with this path). */
export const SANDBOX_BASE_PATH = '/e2b/sandbox';
/** Where the internal routes live; not reachable by path (no target is recorded for such a request). */
export const INTERNAL_PREFIX = '/_sandboxd/e2b';

export type TrafficKind = 'envd' | 'code' | 'app';

/** A sandbox port a request is for. */
export interface SandboxTarget {
  sandboxId: string;
  port: number;
  kind: TrafficKind;
  /** How it was named: the base URL's headers, or a host name (the app's own origin). */
  via: 'base_url' | 'host';
}

const targets = new WeakMap<IncomingMessage, SandboxTarget>();

/** The target the rewriter recorded for a request; undefined when it did not come through the rewriter. */
export function targetOf(request: IncomingMessage): SandboxTarget | undefined {
  return targets.get(request);
}

// Session ids are UUIDs (lower case); the port a canonical decimal.
const SANDBOX_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const PORT = /^[1-9][0-9]{0,4}$/;
const HOST_LABEL = /^([1-9][0-9]{0,4})-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

function kindOf(port: number): TrafficKind {
  return port === ENVD_PORT ? 'envd' : port === CODE_INTERPRETER_PORT ? 'code' : 'app';
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value.trim() : undefined;
}

function portOf(text: string | undefined): number | null {
  if (!text || !PORT.test(text)) return null;
  const port = Number(text);
  return port <= 65535 ? port : null;
}

function route(request: IncomingMessage, target: SandboxTarget, rest: string): string {
  targets.set(request, target);
  return `${INTERNAL_PREFIX}/${target.kind}${rest.startsWith('/') ? rest : `/${rest}`}`;
}

/**
 * The rewriter: the internal path of a sandbox request, or null when the request is not one (the API serves it).
 * `host` is the request's host name as the server trusts it (X-Forwarded-Host behind a trusted proxy).
 */
export function sandboxTrafficRewriter(appDomain: string): (request: IncomingMessage, host: string | undefined) => string | null {
  const suffix = `.${appDomain}`;
  return (request, host) => {
    const url = request.url ?? '/';
    if (url === SANDBOX_BASE_PATH || url.startsWith(`${SANDBOX_BASE_PATH}/`) || url.startsWith(`${SANDBOX_BASE_PATH}?`)) {
      const sandboxId = header(request, 'e2b-sandbox-id')?.toLowerCase();
      const port = portOf(header(request, 'e2b-sandbox-port'));
      // Without both headers the request names no sandbox: an internal route answers 400 saying so.
      if (!sandboxId || !SANDBOX_ID.test(sandboxId) || port === null) return `${INTERNAL_PREFIX}/unnamed`;
      return route(request, { sandboxId, port, kind: kindOf(port), via: 'base_url' }, url.slice(SANDBOX_BASE_PATH.length) || '/');
    }
    if (!host) return null;
    const name = host.toLowerCase().replace(/:\d+$/, '').replace(/\.$/, '');
    if (!name.endsWith(suffix)) return null;
    const match = HOST_LABEL.exec(name.slice(0, -suffix.length));
    const port = portOf(match?.[1]);
    if (!match || port === null) return null;
    return route(request, { sandboxId: match[2]!, port, kind: kindOf(port), via: 'host' }, url);
  };
}
