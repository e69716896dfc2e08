/**
 * Which VM a session has, and in what state, decided once per request: the session and its current VM are read
 * together (one query), tagged (`VmState`), and every caller (admission, ensureVm, checkCanStart) switches on the
 * tag instead of reading the rows again. `settle` turns a state that claims a running VM into that VM's agent, or
 * into nothing when the VM is found to be over (its end recorded first, so a new one may start).
 */
import type { Session, Vm } from '../../model.ts';
import { findSessionWithVm } from '../../store/sessions-store.ts';
import { findVm } from '../../store/vms-store.ts';
import { ownedElsewhere } from '../cluster/ownership.ts';
import { AppError } from '../errors.ts';
import type { VmAcquisition } from './acquisition.ts';
import type { VmCluster } from './cluster.ts';
import type { VmEnds } from './ends.ts';
import type { VmRecovery } from './recovery.ts';
import type { LiveVm, VmServiceDeps } from './types.ts';

/** Where a VM runs, seen from this node (`remote`: another node of the cluster, reached through it). */
export type VmWhere = 'local' | 'remote';

/** The state of a session's VM, as this node sees it. */
export type VmState =
  /** The session has had no VM yet: one may start. */
  | { kind: 'none' }
  /** Its current VM is recorded ended: a new one may start. */
  | { kind: 'ended'; vm: Vm }
  /** This process is starting (or resuming) its VM: callers share that one. */
  | { kind: 'acquiring'; pending: Promise<LiveVm> }
  /** Recorded starting by another process or node: not usable yet, and not to be replaced. */
  | { kind: 'starting'; vm: Vm; where: VmWhere }
  /** Paused: resumed by the session's next use, never replaced. */
  | { kind: 'paused'; vm: Vm }
  /** Recorded running (here, or on a node this one reaches). */
  | { kind: 'active'; vm: Vm; where: VmWhere }
  /** Recorded live on another node, and this one has no cluster to reach it through. */
  | { kind: 'unreachable'; vm: Vm };

/** A session with the state of its VM. */
export interface ResolvedVm {
  session: Session;
  state: VmState;
}

/** A session and its current VM as a caller already read them (`SessionService.getOwnedWithVm`). */
export interface SessionWithVm {
  session: Session;
  vm: Vm | undefined;
}

export class VmResolver {
  constructor(
    private readonly deps: VmServiceDeps,
    private readonly recovery: VmRecovery,
    private readonly acquisition: VmAcquisition,
    private readonly cluster: VmCluster,
    private readonly ends: VmEnds,
  ) {}

  /**
   * The state of the session's VM. `read`: the session and its VM as the caller just read them (used as they
   * are, unless the engine's reconciliation after a restart was still under way then); else they are read here.
   * Waits for that reconciliation first: until then a VM recorded live here may still come back (503 when it fails).
   */
  async resolve(session: Session, read?: SessionWithVm): Promise<ResolvedVm> {
    const readAfterReconciling = this.recovery.isReconciled;
    await this.recovery.ensureReconciled();
    const pending = this.acquisition.pending(session.id);
    if (pending) return { session: read?.session ?? session, state: { kind: 'acquiring', pending } };
    // The record, not the caller's copy of the session: another request may have bound a new VM since.
    const current = read && readAfterReconciling ? read : await this.read(session);
    return { session: current.session, state: this.classify(current.vm) };
  }

  /**
   * The running VM a resolved state stands for, with its agent, or null when there is none to use (none, ended,
   * paused). A VM still recorded live is never passed over: it is returned, waited for until its end is recorded,
   * or answered with an error (503 while it starts, or when its node cannot be reached). Answers the state as it
   * is afterwards (an `active` VM found over is `ended` then).
   */
  async settle(resolved: ResolvedVm): Promise<{ live: LiveVm | null; resolved: ResolvedVm }> {
    const { state } = resolved;
    const ended = (vm: Vm) => ({ live: null, resolved: { session: resolved.session, state: { kind: 'ended' as const, vm } } });
    switch (state.kind) {
      case 'none':
      case 'ended':
      case 'paused':
      case 'acquiring':
        return { live: null, resolved };
      case 'unreachable':
        throw ownedElsewhere(`the session's VM ${state.vm.id} runs`, state.vm.nodeId, this.cluster.nodeId, "send the session's requests to that node");
      case 'starting':
        // An acquisition of this process is joined through `acquiring`; a 'starting' record left by a process
        // that died was ended when this one started.
        throw new AppError(
          'VM_UNAVAILABLE',
          `the session's VM ${state.vm.id} is still starting${state.where === 'remote' ? ` on node ${state.vm.nodeId}` : ''}: retry`,
        );
      case 'active':
        break;
    }
    const { vm } = state;
    // Its node runs it, enforces its lifetime and records its end; this one reaches it through that node.
    if (state.where === 'remote') return { live: { vm, agent: this.cluster.remoteAgentOf(vm) }, resolved };
    if (Date.parse(vm.expiresAt) <= this.deps.clock.now().getTime()) {
      // Its deadline is due (the engine's timer fires about now, or its pre-stop hook runs): end it here rather
      // than run code in it; a hook already running is waited for, not run again.
      await this.ends.end(vm.id, 'expired', vm);
      return ended(vm);
    }
    const agent = this.deps.engine.agent(vm.id);
    if (agent) return { live: { vm, agent }, resolved };
    // Recorded active but no longer live here: the engine reported its end before letting go of it, so that end
    // is being recorded now. Without one (which the engine does not do), it is gone unexplained: crashed.
    if (!(await this.ends.settled(vm.id))) await this.ends.record(vm.id, 'crashed');
    return ended(vm);
  }

  /** The session's row and its current VM's, in one query (the caller's copy when the row is gone). */
  private async read(session: Session): Promise<SessionWithVm> {
    const found = await findSessionWithVm(this.deps.database.db, session.id);
    if (found) return found;
    return { session, vm: session.currentVmId ? await findVm(this.deps.database.db, session.currentVmId) : undefined };
  }

  private classify(vm: Vm | undefined): VmState {
    if (!vm) return { kind: 'none' };
    if (vm.status === 'killed') return { kind: 'ended', vm };
    // Wherever it is: resuming it checks that it is here.
    if (vm.status === 'paused') return { kind: 'paused', vm };
    const where: VmWhere = this.cluster.isLocal(vm) ? 'local' : 'remote';
    if (where === 'remote' && !this.cluster.reachesOthers) return { kind: 'unreachable', vm };
    if (vm.status === 'starting') return { kind: 'starting', vm, where };
    return { kind: 'active', vm, where };
  }
}
