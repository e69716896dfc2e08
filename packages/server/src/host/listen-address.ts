/**
 * Listener addresses as the settings write them (`SANDBOXD_*_LISTEN`): `HOST:PORT`, `[v6]:port` too. The
 * configuration checks them (config/kit.ts); the listeners (api, ssh) split them to bind.
 */

/** `listen` as host (the brackets of an IPv6 address removed) and port. */
export function splitListenAddress(listen: string): { host: string; port: number } {
  const at = listen.lastIndexOf(':');
  return { host: listen.slice(0, at).replace(/^\[(.*)\]$/, '$1'), port: Number(listen.slice(at + 1)) };
}
