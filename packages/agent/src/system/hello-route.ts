/** `GET /v1/hello` (the handshake) and `GET /v1/ping`. */
import { replyJson } from '../http/reply.ts';
import type { RouteRequest } from '../http/router.ts';
import type { HelloResponse, PingResponse } from '../protocol/messages.ts';
import { PROTOCOL_VERSION } from '../protocol/version.ts';
import { AGENT_VERSION } from '../version.ts';
import type { AgentIdentity } from './identity.ts';
import { readUptimeSeconds } from './proc-stats.ts';

/** Operations served, for feature checks within protocol major 1. */
export const CAPABILITIES = [
  'exec',
  'python',
  'files',
  'files-transfer',
  'extract-tar',
  'tunnel',
  'usage',
  'restore',
  'snapshot-prepare',
  'python-spare',
  'snapshot-quiesce',
  'python-results',
  'exec-user',
  'python-stream',
  'exec-keep',
];

/** Builds the handler of `GET /v1/hello`. */
export function createHelloRoute(identity: AgentIdentity) {
  return async ({ stream }: RouteRequest): Promise<void> => {
    const answer: HelloResponse = {
      protocol: { ...PROTOCOL_VERSION },
      agentVersion: AGENT_VERSION,
      vmId: identity.vmId,
      hostname: identity.hostname,
      bootId: await identity.bootId(),
      capabilities: CAPABILITIES,
      uptimeSeconds: await readUptimeSeconds().catch(() => 0),
    };
    replyJson(stream, 200, answer);
  };
}

/** Handler of `GET /v1/ping`. */
export function pingRoute({ stream }: RouteRequest): void {
  const answer: PingResponse = { ok: true, nowMs: Date.now() };
  replyJson(stream, 200, answer);
}
