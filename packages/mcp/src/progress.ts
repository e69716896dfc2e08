/**
 * Progress notifications for long tool calls: while a call waits (a run, a VM starting), the client hears
 * `notifications/progress` every few seconds, when it asked for them with a progress token. Clients that
 * reset their request timeout on progress (the SDK's `resetTimeoutOnProgress`) can then wait for long runs.
 */
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface Progress {
  /** Sends one notification now (a step the tool reached). */
  step(message: string): void;
  /** Stops the heartbeat. */
  stop(): void;
}

/**
 * Starts reporting: one notification at once, then one every `intervalMs` until `stop()`. `progress` is the
 * seconds elapsed (strictly increasing, as the protocol wants); `total` when the wait has a known bound.
 * A no-op when the request carried no progress token. Sending never throws: a closed connection just ends it.
 */
export function startProgress(extra: ToolExtra, label: string, intervalMs: number, totalSeconds?: number): Progress {
  const token = extra._meta?.progressToken;
  if (token === undefined) return { step: () => undefined, stop: () => undefined };
  const started = Date.now();
  let last = -1;
  let current = label;
  const send = () => {
    // Strictly increasing even when two notifications fall in the same millisecond.
    const elapsed = Math.max((Date.now() - started) / 1000, last + 0.001);
    last = elapsed;
    extra
      .sendNotification({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: Number(elapsed.toFixed(3)),
          ...(totalSeconds !== undefined ? { total: totalSeconds } : {}),
          message: `${current} (${Math.round(elapsed)} s)`,
        },
      })
      .catch(() => undefined);
  };
  send();
  const timer = setInterval(send, intervalMs);
  timer.unref?.();
  return {
    step(message) {
      current = message;
      send();
    },
    stop: () => clearInterval(timer),
  };
}

/** Awaits `work` while reporting progress. */
export async function withProgress<T>(extra: ToolExtra, label: string, intervalMs: number, work: () => Promise<T>, totalSeconds?: number): Promise<T> {
  const progress = startProgress(extra, label, intervalMs, totalSeconds);
  try {
    return await work();
  } finally {
    progress.stop();
  }
}
