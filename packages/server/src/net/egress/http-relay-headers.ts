/**
 * Header handling shared by sandboxd's two HTTP/1.1 relays in the egress path (the plain-HTTP forwarder and the
 * vault's TLS interceptor): each side of a relay frames its own connection, so the headers that describe one hop
 * are dropped on the way through, and a handed-over socket (an upgrade) gets its response head written raw.
 */

/**
 * Hop-by-hop headers (RFC 9110 §7.6.1, and the never-standard keep-alive and proxy-connection): they describe one
 * connection, so they are dropped on the way through, as are the headers a Connection header names.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Headers to pass on (flat, as rawHeaders): hop-by-hop ones, those Connection names, and `drop` removed; `add` appended. */
export function endToEndHeaders(rawHeaders: readonly string[], { add = [], drop = [] }: { add?: string[]; drop?: string[] } = {}): string[] {
  const named = new Set<string>(drop);
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() !== 'connection') continue;
    for (const token of rawHeaders[i + 1]!.split(',')) named.add(token.trim().toLowerCase());
  }
  const kept: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const lower = rawHeaders[i]!.toLowerCase();
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-') || named.has(lower)) continue;
    kept.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return kept.concat(add);
}

/** A raw HTTP/1.1 response head, for a socket the HTTP server has handed over (upgrades). */
export function responseHead(status: number, statusMessage: string, rawHeaders: readonly string[]): string {
  let head = `HTTP/1.1 ${status} ${statusMessage}\r\n`;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) head += `${rawHeaders[i]}: ${rawHeaders[i + 1]}\r\n`;
  return `${head}\r\n`;
}
