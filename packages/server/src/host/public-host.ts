/**
 * Resolves a host that the server is about to contact on a user's behalf (a template's registry or git server) and
 * refuses it when any of its addresses is forbidden (`forbidden-addresses.ts`:
 * loopback, private, link-local, metadata…), so a user cannot point the host's own tools at its network (SSRF).
 * Callers connect to an address from the answer, not to the name again, where their tool allows it.
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { forbiddenAddressReason } from './forbidden-addresses.ts';

/** The host is, or resolves to, a forbidden address; the message says which and why. */
export class ForbiddenHostError extends Error {
  override name = 'ForbiddenHostError';
}

/** The host could not be resolved. */
export class UnresolvableHostError extends Error {
  override name = 'UnresolvableHostError';
}

/**
 * The addresses of `host` (a name, an IPv4 address or an IPv6 address with or without brackets). Throws
 * `ForbiddenHostError` when one is forbidden and `allowPrivate` is false, `UnresolvableHostError` when there is none.
 * `lookup` resolves a name (default: the system's resolver, every address).
 */
export async function resolvePublicHost(
  host: string,
  options: { allowPrivate: boolean; setting: string; lookup?: (name: string) => Promise<string[]> },
): Promise<string[]> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  let addresses: string[];
  if (net.isIP(bare) !== 0) addresses = [bare];
  else {
    try {
      addresses = options.lookup ? await options.lookup(bare) : (await lookup(bare, { all: true, verbatim: true })).map((entry) => entry.address);
    } catch (error) {
      throw new UnresolvableHostError(`${bare} could not be resolved (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (addresses.length === 0) throw new UnresolvableHostError(`${bare} has no address`);
  }
  if (!options.allowPrivate) {
    for (const address of addresses) {
      const reason = forbiddenAddressReason(address);
      if (reason) {
        const named = address === bare ? bare : `${bare} (${address})`;
        throw new ForbiddenHostError(
          `${named} is a ${reason} address: the server does not contact such addresses for users (set ${options.setting}=true to allow it)`,
        );
      }
    }
  }
  return addresses;
}
