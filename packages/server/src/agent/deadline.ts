/** A per-call deadline combined with the caller's AbortSignal. */
import { AgentError, AgentTimeoutError } from './errors.ts';

/** Options every client call accepts. */
export interface CallOptions {
  /** Deadline of the whole call, including streamed bodies. Each call has a default. */
  timeoutMs?: number;
  /** Cancels the call (the guest side is cancelled too). */
  signal?: AbortSignal;
}

/** Ends a call when its time is up or the caller aborts. */
export class Deadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly onCallerAbort: (() => void) | undefined;

  constructor(
    private readonly operation: string,
    readonly timeoutMs: number,
    private readonly callerSignal?: AbortSignal,
  ) {
    if (Number.isFinite(timeoutMs)) {
      this.timer = setTimeout(() => this.controller.abort(new AgentTimeoutError(operation, timeoutMs)), timeoutMs);
    }
    if (callerSignal) {
      this.onCallerAbort = () => this.controller.abort(new AgentError('AGENT_ABORTED', `${operation} was aborted`, { cause: callerSignal.reason }));
      if (callerSignal.aborted) this.onCallerAbort();
      else callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
    }
  }

  /** Aborted (with the error to throw as reason) when the call must end. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Throws the deadline's error if it has passed. */
  check(): void {
    if (this.controller.signal.aborted) throw this.controller.signal.reason as Error;
  }

  /** Rejects with the deadline's error when it passes first. */
  race<T>(promise: Promise<T>): Promise<T> {
    const signal = this.controller.signal;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    return new Promise<T>((resolve, reject) => {
      const onAbort = (): void => reject(signal.reason as Error);
      signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        (value) => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error as Error);
        },
      );
    });
  }

  /** Stops the timer; call when the operation is over. */
  clear(): void {
    clearTimeout(this.timer);
    if (this.onCallerAbort) this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }
}
