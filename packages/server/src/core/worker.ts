/**
 * Background work that lives as long as the app: a listener, a queue consumer, timers, a driver's connections,
 * the records a start or a stop of this node owes the store. The app keeps one ordered list of them (app.ts) and
 * starts them in that order once it is ready; it stops them in reverse, in two passes (see `intake`).
 */
export interface Worker {
  /** Names it in the log when it fails. */
  readonly name: string;
  /**
   * It takes new work from outside (a listener, a queue, a poller): stopped in the first pass, before the server
   * waits for the requests in flight; every other worker is stopped in the second pass, once they ended.
   */
  readonly intake?: boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
}
