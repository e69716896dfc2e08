/**
 * Whether a request read on an intercepted TLS connection is for the name the connection was opened for, and the
 * path it goes upstream with. The TLS interceptor swaps in the secret bound to the connection's name (its SNI), so
 * a request naming any other host must not be forwarded with it.
 */

/** The host of a Host header or URL authority: lower case, no port, no brackets, no trailing dot. */
function authorityHost(authority: string): string {
  const host = authority.startsWith('[')
    ? authority.slice(1, authority.indexOf(']') === -1 ? undefined : authority.indexOf(']'))
    : authority.replace(/:\d*$/, '');
  return host.toLowerCase().replace(/\.$/, '');
}

/**
 * Why a request on a connection opened for `name` (the SNI) is not for `name`, or null. A front end shared by
 * many hosts routes on Host (or on an absolute-form target, RFC 9112 §3.2.2), so a request whose Host is another
 * name would take the secret swapped in for `name` to that other host.
 */
export function misdirection(name: string, target: string, rawHeaders: readonly string[]): string | null {
  const hosts: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'host') hosts.push(rawHeaders[i + 1]!);
  if (hosts.length > 1) return 'the request has more than one Host header';
  if (hosts.length === 1 && authorityHost(hosts[0]!.trim()) !== name) return `its Host is not ${name}`;
  if (target.startsWith('/') || target === '*') return null;
  const authority = /^https?:\/\/([^/?#]*)/i.exec(target)?.[1];
  if (authority === undefined) return 'its target is neither a path nor an http(s) URL';
  if (authority.includes('@') || authorityHost(authority) !== name) return `its target names a host other than ${name}`;
  return null;
}

/** An absolute-form target cut to origin form (the raw path and query, unparsed); other targets as they are. */
export function originForm(target: string): string {
  const absolute = /^https?:\/\/[^/?#]*(.*)$/is.exec(target);
  if (!absolute) return target;
  const rest = absolute[1]!.replace(/#.*$/s, '');
  return rest.startsWith('/') ? rest : `/${rest}`;
}
