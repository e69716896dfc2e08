/**
 * Server streams of the in-sandbox API send keep-alive messages while nothing else happens, at the interval the
 * SDK asks for, so proxies and the SDK's idle timers do not drop a quiet stream (a long command, a watch).
 */

/** `source`'s items, with `keepalive()` between them whenever `intervalMs` passes without one (null: never). */
export async function* withKeepalive<T>(source: AsyncIterable<T>, intervalMs: number | null, keepalive: () => T): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  if (intervalMs === null) {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return;
      yield next.value;
    }
  }
  let pending: Promise<IteratorResult<T>> | null = null;
  try {
    for (;;) {
      pending ??= iterator.next();
      let timer: NodeJS.Timeout | undefined;
      const tick = new Promise<'tick'>((resolve) => (timer = setTimeout(() => resolve('tick'), intervalMs)));
      const winner = await Promise.race([pending, tick]);
      clearTimeout(timer);
      if (winner === 'tick') {
        yield keepalive();
        continue;
      }
      pending = null;
      if (winner.done) return;
      yield winner.value;
    }
  } finally {
    // The reader left early (the client went away): end the source too.
    await iterator.return?.();
  }
}
