/**
 * The other nodes of the cluster over HTTP (the core's `RemoteNodes` port): each at the internal URL it
 * registered (its internal listener), each request signed with the cluster secret for that one node, body included
 * (core/cluster/internal-auth.ts). A VM's agent goes over the agent RPC's WebSocket (agent-rpc-client.ts); every
 * other request is one command (contract/cluster-commands.ts) posted to `/internal/v1/commands`.
 */
import { INTERNAL_COMMANDS_PATH, type InternalCommand } from '../contract/cluster-commands.ts';
import type { InternalAuth } from '../core/cluster/internal-auth.ts';
import type { CommandAnswer, RemoteNodes } from '../core/cluster/remote-nodes.ts';
import { AppError, ERROR_CODES, InputError, type ErrorCode, type InputProblem } from '../core/errors.ts';
import type { GuestAgent } from '../core/vm-engine.ts';
import type { Vm } from '../model.ts';
import type { Database } from '../store/database.ts';
import { findNode } from '../store/nodes-store.ts';
import { RemoteGuestAgent } from './agent-rpc-client.ts';

/**
 * How long each op may take on the other node, and what the error says it was doing there ("… node n"):
 * a start may queue behind other restores or make a template's first snapshot; a browser call waits as long as
 * the longest interaction timeout the API accepts, plus the queue ahead of it.
 */
const OPS: { [Op in InternalCommand['op']]: { timeoutMs: number; what: (command: Extract<InternalCommand, { op: Op }>) => string } } = {
  'vm.start': { timeoutMs: 600_000, what: () => 'a new VM was placed on' },
  'vm.resume': { timeoutMs: 600_000, what: (command) => `paused VM ${command.vm_id} was to resume on` },
  'egress.policy': { timeoutMs: 30_000, what: (command) => `VM ${command.vm_id} runs on` },
  'browser.call': {
    timeoutMs: 300_000,
    what: (command) => `browser session ${typeof command.call.argument === 'string' ? command.call.argument : command.call.argument.session_id} runs on`,
  },
};

export class HttpRemoteNodes implements RemoteNodes {
  constructor(
    private readonly database: Database,
    private readonly auth: InternalAuth,
  ) {}

  agentOf(vm: Pick<Vm, 'id' | 'nodeId'>): GuestAgent {
    return new RemoteGuestAgent(this.auth, vm.nodeId, () => this.internalUrlOf(vm.nodeId, `VM ${vm.id} runs on node ${vm.nodeId}`), vm.id);
  }

  /**
   * Posts `command` to node `nodeId`'s internal listener, signed as the exact bytes sent (the receiver hashes what
   * it got; the principal travels in them). Answers its answer, or throws its error rebuilt as the same AppError
   * (or InputError: a 422's problems).
   */
  async command<C extends InternalCommand>(nodeId: string, command: C): Promise<CommandAnswer<C>> {
    const op = OPS[command.op] as { timeoutMs: number; what: (command: C) => string };
    const what = op.what(command);
    const baseUrl = await this.internalUrlOf(nodeId, `${what} node ${nodeId}`);
    const json = JSON.stringify(command);
    let response: Response;
    try {
      response = await fetch(new URL(INTERNAL_COMMANDS_PATH, baseUrl), {
        method: 'POST',
        headers: {
          ...this.auth.sign({ method: 'POST', pathWithQuery: INTERNAL_COMMANDS_PATH, destination: nodeId, body: json }),
          'content-type': 'application/json',
        },
        body: json,
        signal: AbortSignal.timeout(op.timeoutMs),
      });
    } catch (error) {
      throw new AppError('VM_UNAVAILABLE', `node ${nodeId} could not be reached (${what} it): ${(error as Error).message}`);
    }
    const answer = (await response.json().catch(() => ({}))) as CommandAnswer<C> & { code?: string; detail?: unknown };
    if (response.ok) {
      if ((command.op === 'vm.start' || command.op === 'vm.resume') && !(answer as { vm_id?: unknown }).vm_id)
        throw new AppError('VM_UNAVAILABLE', `node ${nodeId} answered a VM start without a VM id`);
      return answer;
    }
    if (response.status === 422 && Array.isArray(answer.detail)) throw new InputError(answer.detail as InputProblem[]);
    const code = answer.code && answer.code in ERROR_CODES ? (answer.code as ErrorCode) : 'VM_UNAVAILABLE';
    throw new AppError(code, typeof answer.detail === 'string' ? answer.detail : `node ${nodeId} answered ${response.status} (${what} it)`);
  }

  private async internalUrlOf(nodeId: string, what: string): Promise<string> {
    const node = await findNode(this.database.db, nodeId);
    if (!node || node.state !== 'live')
      throw new AppError('VM_UNAVAILABLE', `${what}, which is ${node ? node.state : 'not registered'}: retry, or start a new VM`);
    return node.internal_url;
  }
}
