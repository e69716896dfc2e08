/**
 * AgentProbes over the real agent client: a VM is up when `AgentClient.connect` completes its handshake
 * (link sync, HTTP/2, hello with a compatible protocol). This is wiring between two ports; the driver itself
 * only knows the `AgentProbe` interface.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { AgentClient, AgentProtocolError } from '../agent/index.ts';
import type { AgentProbe } from './vm-driver.ts';

/** Longest single connect attempt; the probe retries until its signal aborts. */
const ATTEMPT_TIMEOUT_MS = 30_000;

/**
 * An AgentProbe that hands its connected client over with the VM (`StartedVm.agent`): the engine's probe.
 * A protocol mismatch fails at once.
 */
export function agentClientHandoff(): AgentProbe<AgentClient> {
  return {
    async waitUntilReady(socketPath, { signal, transferDir }) {
      for (;;) {
        signal.throwIfAborted();
        try {
          return await AgentClient.connect({ socketPath }, { timeoutMs: ATTEMPT_TIMEOUT_MS, signal, transferDir });
        } catch (error) {
          // Another protocol major will not get better by waiting.
          if (error instanceof AgentProtocolError) throw error;
          signal.throwIfAborted();
        }
        await sleep(100, undefined, { signal });
      }
    },
    release: (client) => client.close(),
  };
}

/** An AgentProbe that connects, says hello and disconnects (for callers that talk to the agent their own way). */
export function agentClientProbe(): AgentProbe {
  const handoff = agentClientHandoff();
  return {
    async waitUntilReady(socketPath, options) {
      await (await handoff.waitUntilReady(socketPath, options)).close();
    },
    release: async () => {},
  };
}
