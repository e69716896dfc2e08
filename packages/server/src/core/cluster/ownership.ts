/**
 * The one answer to "is this on this node, or which node owns it?". A VM, a volume's image, a snapshot's or a
 * built template's files, a browser session's page: each lives on the one node its row names, and whatever works
 * on it runs there (through the owner's agent, kill queue or internal commands) or is refused here with the
 * owner's name. Every place that decides it asks this module, so the rule and the refusal read the same everywhere
 * and a single node is just the case where every owner is local.
 */
import { AppError } from '../errors.ts';

/** A record that lives on one node (its `nodeId`), or that node's id itself (a row's `node_id`). */
export type Placed = string | { readonly nodeId: string };

/** Where a resource lives, seen from this node. */
export type Owner = { readonly local: true } | { readonly local: false; readonly nodeId: string };

const nodeOf = (resource: Placed): string => (typeof resource === 'string' ? resource : resource.nodeId);

/**
 * The refusal of work on something another node holds (503 VM_UNAVAILABLE: the client can retry through that
 * node). `what` names the thing and how it is there ("volume v is", "VM x runs"); `advice` what to do instead.
 */
export function ownedElsewhere(what: string, owner: string, here: string, advice = 'send the request to that node'): AppError {
  return new AppError('VM_UNAVAILABLE', `${what} on node ${owner}, not on this one (${here}): ${advice}`);
}

/** This node's view of ownership: built once from the node id (the engine's) and handed to every service that asks. */
export class Ownership {
  constructor(readonly nodeId: string) {}

  /** Local, or the node that owns it. */
  ownerOf(resource: Placed): Owner {
    const nodeId = nodeOf(resource);
    return nodeId === this.nodeId ? { local: true } : { local: false, nodeId };
  }

  isLocal(resource: Placed): boolean {
    return nodeOf(resource) === this.nodeId;
  }

  /** Runs `local()` when this node owns the resource, else `remote(owner)`. */
  onOwner<T>(resource: Placed, local: () => T, remote: (nodeId: string) => T): T {
    const owner = this.ownerOf(resource);
    return owner.local ? local() : remote(owner.nodeId);
  }

  /** Refuses (ownedElsewhere) a resource another node owns. */
  assertLocal(resource: Placed, what: string, advice?: string): void {
    const owner = this.ownerOf(resource);
    if (!owner.local) throw ownedElsewhere(what, owner.nodeId, this.nodeId, advice);
  }
}
