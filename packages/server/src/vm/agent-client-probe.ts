/**
 * The AgentProbe over the real agent client: a VM is up when `AgentClient.connect` completes its
 * handshake (link sync, HTTP/2, hello with a compatible protocol). This is wiring between two ports; the
 * driver itself only knows the `AgentProbe` interface.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentClient, AgentProtocolError } from '../agent/index.ts';
import type { AgentProbe } from './vm-driver.ts';

/** Longest single connect attempt; the probe retries until its signal aborts. */
const ATTEMPT_TIMEOUT_MS = 30_000;

/** An AgentProbe that connects, says hello and disconnects. A protocol mismatch fails at once. */
export function agentClientProbe(): AgentProbe {
  return {
    async waitUntilReady(socketPath, { signal }) {
      for (;;) {
        signal.throwIfAborted();
        try {
          const client = await AgentClient.connect({ socketPath }, { timeoutMs: ATTEMPT_TIMEOUT_MS, signal });
          await client.close();
          return;
        } catch (error) {
          // Another protocol major will not get better by waiting.
          if (error instanceof AgentProtocolError) throw error;
          signal.throwIfAborted();
        }
        await sleep(100, undefined, { signal });
      }
    },
  };
}
