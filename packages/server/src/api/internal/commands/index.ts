/**
 * POST /internal/v1/commands: everything one node asks of another that is not a stream to a VM's agent (the agent
 * RPC's WebSocket) or a kill (the owner's durable queue). The body is one command of the contract's union
 * (contract/cluster-commands.ts), told apart by `op`: validated as a whole against that op's schema (the browser
 * call's argument against the public route's very schema), then dispatched to the op's one handler
 * (Firecracker's `VmmAction`: parse, then dispatch). Served on the internal listener only, whose hooks
 * (../signed-request.ts) admit only a request signed for this node with a fresh nonce, the raw body hashed before
 * it is parsed: the principal a command carries is trusted because the whole body is signed, and each handler
 * checks ownership again as the local service does for any caller.
 */
import { INTERNAL_COMMANDS_PATH, InternalCommand, type InternalCommandOf, type InternalCommandOp } from '../../../contract/cluster-commands.ts';
import type { Services } from '../../../services.ts';
import type { App } from '../../types.ts';
import { runBrowserCall } from './browser-call.ts';
import { readOrSetEgressPolicy } from './egress-policy.ts';
import { resumePlacedVm } from './vm-resume.ts';
import { startPlacedVm } from './vm-start.ts';

/** One handler per op: what this node does for the command, and the answer the sender gets back as it is. */
const HANDLERS: { [Op in InternalCommandOp]: (services: Services, command: InternalCommandOf<Op>) => Promise<unknown> } = {
  'vm.start': startPlacedVm,
  'vm.resume': resumePlacedVm,
  'egress.policy': readOrSetEgressPolicy,
  'browser.call': runBrowserCall,
};

export function registerInternalCommands(app: App, services: Services): void {
  app.post(INTERNAL_COMMANDS_PATH, { schema: { body: InternalCommand } }, async (request) => {
    const command = request.body;
    const handle = HANDLERS[command.op] as (services: Services, command: InternalCommand) => Promise<unknown>;
    return handle(services, command);
  });
}
