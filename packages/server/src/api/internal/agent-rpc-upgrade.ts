/**
 * The internal endpoint other nodes reach this node's VMs through (`/internal/v1/agent/{vm_id}/{op}`, a
 * WebSocket per operation, see cluster/agent-rpc-messages.ts), on the internal listener only. Only a handshake signed
 * with the cluster secret for this node, with a nonce not seen before, gets through; the VM must be live on this
 * node. The operation's arguments (the first message) must be the bytes whose sha256 the handshake signed, so a
 * captured handshake cannot carry other arguments (another command to run as root in the VM): a different
 * message closes the socket (1008) before anything runs. No user credential opens it.
 */
import type { IncomingMessage } from 'node:http';
import { WebSocketServer } from 'ws';
import { AGENT_OPS, type AgentOp } from '../../cluster/agent-rpc-args.ts';
import { AGENT_RPC_PATH } from '../../cluster/agent-rpc-messages.ts';
import { serveAgentRpc } from '../../cluster/agent-rpc-server.ts';
import { checkSignedBody } from '../../core/cluster/internal-auth.ts';
import { AppError } from '../../core/errors.ts';
import type { Services } from '../../services.ts';
import type { UpgradeHandler } from '../upgrade-router.ts';

const PATH = new RegExp(`^${AGENT_RPC_PATH}/(vm-[A-Za-z0-9]{1,40})/([A-Za-z]+)$`);

/** The handler, and `closeAll` for the app's stop: operations of other nodes end with this node's listener. */
export function agentRpcUpgradeHandler(services: Services): UpgradeHandler<{ vmId: string; op: AgentOp }> & { closeAll(): void } {
  const sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: 64 * 2 ** 20, clientTracking: true });
  return {
    // A tunnel another node keeps open (a preview's keep-alive connection) would otherwise hold the server's close.
    closeAll: () => sockets.clients.forEach((ws) => ws.terminate()),
    claim(request: IncomingMessage) {
      const url = request.url ?? '';
      if (!url.startsWith(`${AGENT_RPC_PATH}/`)) return null;
      const match = PATH.exec(url);
      return { vmId: match?.[1] ?? '', op: (match?.[2] ?? '') as AgentOp };
    },
    async handle(request, socket, head, { vmId, op }, log) {
      const verified = services.internalAuth.verifyHeaders('GET', request.url ?? '', request.headers);
      const from = verified.from;
      if (!vmId || !(AGENT_OPS as readonly string[]).includes(op)) throw new AppError('NOT_FOUND', 'no such internal operation');
      const agent = services.sandbox.engine.agent(vmId);
      if (!agent) throw new AppError('VM_UNAVAILABLE', `VM ${vmId} is not running on node ${services.sandbox.engine.nodeId}`);
      await new Promise<void>((resolve) => {
        sockets.handleUpgrade(request, socket, head, (ws) => {
          ws.on('error', (error) => log.debug({ err: error, vm: vmId, op, from }, 'internal agent connection failed'));
          // The first message is the operation's arguments; what follows belongs to the operation.
          ws.once('message', (data: Buffer) => {
            try {
              checkSignedBody(verified, data);
            } catch {
              log.warn({ vm: vmId, op, from }, 'internal agent operation refused: its arguments are not the signed ones');
              ws.close(1008, 'the arguments are not the ones the handshake signed');
              return;
            }
            let args: unknown;
            try {
              args = JSON.parse(data.toString());
            } catch {
              ws.close(1007, 'arguments must be JSON');
              return;
            }
            serveAgentRpc(ws, agent, op, args).catch((error: unknown) => {
              log.error({ err: error, vm: vmId, op, from }, 'internal agent operation failed');
              ws.close(1011);
            });
          });
          resolve();
        });
      });
    },
  };
}
