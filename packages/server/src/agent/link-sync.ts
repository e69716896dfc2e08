/**
 * Host side of link sync (see `@sandboxd/agent/protocol` link-sync): send a hello with a fresh nonce, repeat it
 * with growing pauses (padded, to end any old agent session still parsing), and skip everything the guest sends
 * until the agent's answer carrying our nonce. What follows the answer is put back into the stream for HTTP/2.
 */
import { randomBytes } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { encodeHostHello, findAgentReady, LINK_NONCE_BYTES, READY_BYTES } from '@sandboxd/agent/protocol';
import type { Deadline } from './deadline.ts';
import { AgentUnavailableError } from './errors.ts';

/**
 * Pauses between hellos: three at 100 ms, three at 200 ms, ... up to 1 s. A stale agent session may swallow
 * the first two or three (see link-sync), so those come quickly; a cold boot takes seconds, so later ones back
 * off.
 */
const FIRST_REPEAT_MS = 100;
const MAX_REPEAT_MS = 1000;
const REPEATS_PER_STEP = 3;

/** Runs link sync on a freshly connected channel; afterwards the stream is paused and ready for HTTP/2. */
export function syncLink(stream: Duplex, deadline: Deadline): Promise<void> {
  // Host-side randomness is fine here: the host is not cloned.
  const nonce = randomBytes(LINK_NONCE_BYTES);
  let received: Buffer = Buffer.alloc(0);
  let repeats = 0;
  let timer: NodeJS.Timeout | undefined;
  return deadline.race(
    new Promise<void>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer);
        stream.off('data', onData);
        stream.off('close', onClose);
        stream.off('end', onClose);
        stream.off('error', onError);
        deadline.signal.removeEventListener('abort', cleanup);
      };
      const sendHello = (): void => {
        if (stream.destroyed) return;
        stream.write(encodeHostHello(nonce, repeats > 0));
        timer = setTimeout(sendHello, Math.min(FIRST_REPEAT_MS * 2 ** Math.floor(repeats / REPEATS_PER_STEP), MAX_REPEAT_MS));
        repeats += 1;
      };
      const onData = (chunk: Buffer): void => {
        received = received.length === 0 ? chunk : Buffer.concat([received, chunk]);
        const end = findAgentReady(received, nonce);
        if (end < 0) {
          // Keep only what may be the start of the answer; the rest is an old session's leftovers.
          if (received.length >= READY_BYTES) received = Buffer.from(received.subarray(received.length - READY_BYTES + 1));
          return;
        }
        cleanup();
        stream.pause();
        const rest = received.subarray(end);
        if (rest.length > 0) stream.unshift(rest);
        resolve();
      };
      const onClose = (): void => {
        cleanup();
        reject(new AgentUnavailableError('the agent channel closed before the agent answered'));
      };
      const onError = (error: Error): void => {
        cleanup();
        reject(new AgentUnavailableError(`the agent channel failed: ${error.message}`, { cause: error }));
      };
      deadline.signal.addEventListener('abort', cleanup, { once: true });
      stream.on('data', onData);
      stream.once('end', onClose);
      stream.once('close', onClose);
      stream.once('error', onError);
      sendHello();
    }),
  );
}
