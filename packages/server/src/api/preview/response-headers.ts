/**
 * What of an app's response headers reaches the browser, by the origin the preview is served on:
 * - **shared**: a path preview (`/v1/app/{session_id}/{port}/…`) shares its origin with the web console and the
 *   API. There the VM may not leave any state in the browser: the headers below, which a browser applies to the
 *   whole origin (or site) rather than to the one page, are dropped. The page itself runs sandboxed
 *   (forward-http.ts `PATH_PREVIEW_SANDBOX`), so it cannot set them from script either. Such previews are
 *   stateless; apps that need cookies use `direct_url` or a custom domain.
 * - **own**: a host-name preview or a custom domain is the app's own origin, so its cookies stay, but host-only:
 *   a `Domain` attribute would put them on the parent domain, where the console (cookie tossing, shadowing of
 *   its session) or sibling VMs' hosts would receive them.
 */

/** Where a preview is served: the console's origin (`shared`) or an origin of the app's own (`own`). */
export type PreviewOrigin = 'shared' | 'own';

/**
 * Response headers never passed on the shared origin (lower case), each with the state it would set there.
 * A deny list: headers a browser applies to one response only (caching, content type, the app's own CSP,
 * which is enforced together with the sandbox) are the app's business.
 */
const SHARED_ORIGIN_DENIED: ReadonlyMap<string, string> = new Map([
  ['set-cookie', "cookies on the console's origin: session fixation, shadowing its session cookie by Path, forced sign-out"],
  ['set-cookie2', 'the obsolete form of Set-Cookie (RFC 2965), refused for the same reason'],
  ['clear-site-data', "wipes the origin's cookies, storage and cache: signs the console out"],
  ['service-worker-allowed', 'widens a service worker above its script, up to `/`: a worker that controls every console page'],
  ['refresh', 'navigates the tab elsewhere after the page loaded (a redirect that looks like the console)'],
  ['set-login', "the origin's FedCM login status"],
  ['strict-transport-security', "HSTS for the console's host (and, with includeSubDomains, every name under it), or max-age=0 to undo the operator's"],
  ['alt-svc', "sends the origin's later connections to another endpoint"],
  ['nel', "a Network Error Logging policy for the origin: reports on later console requests, URLs included, to the VM's endpoint"],
  ['report-to', 'the reporting endpoints NEL and other policies send to (persisted per origin)'],
  ['reporting-endpoints', 'the same, for the Reporting API v1'],
  ['accept-ch', 'client-hint preferences the browser keeps for the origin'],
  ['critical-ch', 'the same, with a retry of the request'],
  ['origin-agent-cluster', 'how the whole origin is isolated, decided by the first page that says'],
  ['shared-storage-write', "writes to the origin's shared storage"],
  ['attribution-reporting-register-source', 'attribution state registered for the site'],
  ['attribution-reporting-register-trigger', 'attribution state registered for the site'],
  ['observe-browsing-topics', 'a Topics observation recorded for the site'],
]);

/** Whether a response header (lower-case name) from the VM is dropped on a preview served on `origin`. */
export function isDeniedResponseHeader(lowerName: string, origin: PreviewOrigin): boolean {
  return origin === 'shared' ? SHARED_ORIGIN_DENIED.has(lowerName) : lowerName === 'set-cookie2';
}

/** A `Set-Cookie` value without its `Domain` attribute(s): the cookie stays with the exact host that set it. */
export function hostOnlyCookie(setCookie: string): string {
  const [pair = '', ...attributes] = setCookie.split(';');
  return [pair, ...attributes.filter((attribute) => attribute.split('=', 1)[0]!.trim().toLowerCase() !== 'domain')].join(';');
}

/**
 * A response header's value as it may reach the browser on `origin`, or null when it is dropped (see the
 * module comment). `value` as Node gives it: an array for repeated headers (Set-Cookie).
 */
export function allowedResponseHeader(lowerName: string, value: string | string[], origin: PreviewOrigin): string | string[] | null {
  if (isDeniedResponseHeader(lowerName, origin)) return null;
  if (lowerName === 'set-cookie') return Array.isArray(value) ? value.map(hostOnlyCookie) : hostOnlyCookie(value);
  return value;
}

/** The most a WebSocket handshake answer's head may be before the exchange is dropped. */
export const MAX_RESPONSE_HEAD_BYTES = 64 * 1024;

/**
 * A raw HTTP response head (status line and header lines, `\r\n`-separated, without the blank line) with the
 * headers `origin` does not allow dropped and Set-Cookie made host-only: for WebSocket handshakes, whose
 * answer is relayed as bytes (a browser applies Set-Cookie from a handshake answer too). A folded line
 * (obs-fold) belongs to the header before it.
 */
export function filterResponseHead(head: string, origin: PreviewOrigin): string {
  const [status = '', ...lines] = head.split('\r\n');
  const out = [status];
  let dropping = false;
  for (const line of lines) {
    if (line.startsWith(' ') || line.startsWith('\t')) {
      if (!dropping) out.push(line);
      continue;
    }
    const colon = line.indexOf(':');
    const name = (colon < 0 ? line : line.slice(0, colon)).trim().toLowerCase();
    dropping = isDeniedResponseHeader(name, origin);
    if (dropping) continue;
    out.push(name === 'set-cookie' ? `${line.slice(0, colon + 1)} ${hostOnlyCookie(line.slice(colon + 1).trim())}` : line);
  }
  return out.join('\r\n');
}
