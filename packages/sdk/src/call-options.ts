/**
 * What every method of the client that sends a request takes: as its last parameter, or within the options object it
 * already had (`client.vms.get(id, { signal })`, `client.sessions.create({ memoryMb: 1024, signal })`).
 */
export interface CallOptions {
  /**
   * Cancels the call. Aborting it ends the request under way (or the polling of a wait) and the call rejects with the
   * signal's reason; a cancelled call is never retried. A signal aborted already: the call rejects without a request.
   * `AbortSignal.timeout(ms)` bounds a call in time.
   */
  signal?: AbortSignal | undefined;
}
