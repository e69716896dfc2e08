/**
 * TXT lookups over Node's own resolver (c-ares), for custom domain verification: the configured servers
 * (`SANDBOXD_DNS_SERVERS`, else the system's), and one deadline per lookup. Each lookup has its own
 * `Resolver`, so cancelling a late one cancels nothing else. Nothing here runs a program or reads a file.
 */
import { Resolver } from 'node:dns/promises';

export interface TxtResolverOptions {
  /** `host` or `host:port` IP addresses (`[v6]:port`); null: the system's resolvers. */
  servers: string[] | null;
  /** Longest a lookup may take, all tries included. */
  timeoutMs: number;
}

/** What a lookup found (the shape of the core's `TxtAnswer`). */
export type TxtLookupAnswer =
  { kind: 'records'; records: string[] } | { kind: 'absent'; why: 'nxdomain' | 'nodata' } | { kind: 'error'; code: string; message: string };

const TRIES = 2;

export function createTxtResolver(options: TxtResolverOptions): { lookupTxt(name: string): Promise<TxtLookupAnswer> } {
  const where = options.servers ? options.servers.join(', ') : 'the system resolver';
  return {
    async lookupTxt(name) {
      // c-ares waits `timeout` for the first try and longer for the next; the deadline bounds the whole.
      const resolver = new Resolver({ timeout: Math.max(50, Math.floor(options.timeoutMs / (TRIES + 1))), tries: TRIES });
      if (options.servers) resolver.setServers(options.servers);
      let timedOut = false;
      const deadline = setTimeout(() => {
        timedOut = true;
        resolver.cancel();
      }, options.timeoutMs);
      try {
        const records = await resolver.resolveTxt(name);
        return { kind: 'records', records: records.map((chunks) => chunks.join('')) };
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'ERROR';
        if (code === 'ENOTFOUND') return { kind: 'absent', why: 'nxdomain' };
        if (code === 'ENODATA') return { kind: 'absent', why: 'nodata' };
        if (timedOut || code === 'ECANCELLED' || code === 'ETIMEOUT') {
          return { kind: 'error', code: 'ETIMEOUT', message: `no answer from ${where} within ${options.timeoutMs} ms` };
        }
        return { kind: 'error', code, message: `${code} from ${where}` };
      } finally {
        clearTimeout(deadline);
      }
    },
  };
}
