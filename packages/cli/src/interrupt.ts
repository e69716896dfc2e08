/** Ctrl-C for commands that must tidy up before they exit: a half-written file removed, a progress line cleared. */

/** Ctrl-C stopped the command (it exits 130, as a shell reports an interrupted program). */
export class InterruptedError extends Error {
  override name = 'InterruptedError';
}

/**
 * Runs `work` with a signal that the first Ctrl-C aborts: `work` rejects as it unwinds (its `finally` blocks run) and
 * the command ends with an InterruptedError carrying `message`. A second Ctrl-C exits at once, for work that does
 * not stop.
 */
export async function interruptible<T>(message: string, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onInterrupt = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort(new InterruptedError(message));
  };
  process.on('SIGINT', onInterrupt);
  try {
    return await work(controller.signal);
  } catch (error) {
    // Whatever the abort surfaced as (an AbortError, a stream's premature close), it was the interruption.
    if (controller.signal.aborted) throw new InterruptedError(message);
    throw error;
  } finally {
    process.off('SIGINT', onInterrupt);
  }
}
