/**
 * PTY sessions (terminals) in a user's VM. The terminals live in the VM's agent (they outlive dropped
 * connections and this server's restarts, and end with the VM); this service checks ownership, applies the
 * session's environment, and hands out single-use attach tokens for browsers, which cannot set headers on
 * a WebSocket.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Principal } from './authenticator.ts';
import type { Clock } from './clock.ts';
import { AppError } from './errors.ts';
import type { SessionService } from './sessions.ts';
import type { GuestAgent, PtyAttachment, PtyInfo, PtyOutput } from './vm-engine.ts';
import { resumesOnTraffic, type VmService } from './vms/index.ts';
import type { Session, Vm } from '../model.ts';
import type { Database } from '../store/database.ts';
import { deleteExpiredAttachTokens, insertAttachToken, takeAttachToken } from '../store/pty-tokens-store.ts';

/** How long an attach token works (it is also single-use). */
export const ATTACH_TOKEN_TTL_SECONDS = 60;

/** The terminal's owner: through a session (its current VM) or a VM directly. */
export type TerminalScope = { kind: 'session'; sessionId: string } | { kind: 'vm'; vmId: string };

export interface TerminalSpec {
  cols: number;
  rows: number;
  /** A shell command line (run with `shell -lc`, or bash). */
  command?: string | undefined;
  /** The shell program; alone it is started as a login shell. */
  shell?: string | undefined;
  /** A program and its arguments, run as given (instead of `command` and `shell`). */
  argv?: string[] | undefined;
  env?: Record<string, string> | undefined;
  cwd?: string | undefined;
  scrollbackBytes?: number | undefined;
}

/** A terminal as the API shows it. */
export interface TerminalView {
  pty_id: string;
  session_id: string | null;
  vm_id: string;
  cols: number;
  rows: number;
  command: string[];
  cwd: string;
  pid: number;
  status: 'running' | 'exited';
  exit_code: number | null;
  signal: string | null;
  created_at: string;
  exited_at: string | null;
  /** WebSocket connections attached right now. */
  attachments: number;
}

/** What an attach token stands for. */
export interface AttachGrant {
  userId: number;
  vmId: string;
  ptyId: string;
}

/** The VM a terminal request acts on, with its agent. */
interface TerminalVm {
  vm: Vm;
  session: Session | undefined;
  agent: GuestAgent;
}

export class TerminalService {
  constructor(
    /** Attach tokens live in the store (by hash), so one minted by any node attaches through any other. */
    private readonly database: Database,
    private readonly sessions: SessionService,
    private readonly vms: VmService,
    private readonly clock: Clock,
  ) {}

  /** Starts a terminal; a session without a running VM gets one, like an execution would. */
  async create(principal: Principal, scope: TerminalScope, spec: TerminalSpec): Promise<TerminalView> {
    const target = scope.kind === 'session' ? await this.sessionVm(principal, scope.sessionId, true) : await this.ownedVm(principal, scope.vmId);
    const sessionEnv = target.session?.env ?? {};
    const shell = spec.shell ?? '/bin/bash';
    if (spec.argv !== undefined && (spec.argv.length === 0 || spec.command !== undefined))
      throw new AppError('BAD_REQUEST', 'argv names at least the program, and comes without command');
    const argv = spec.argv ?? (spec.command !== undefined ? [shell, '-lc', spec.command] : [shell, '-l']);
    const info = await target.agent.createPty({
      cols: spec.cols,
      rows: spec.rows,
      argv,
      env: { ...sessionEnv, ...spec.env },
      ...(spec.cwd !== undefined ? { cwd: spec.cwd } : {}),
      ...(spec.scrollbackBytes !== undefined ? { scrollbackBytes: spec.scrollbackBytes } : {}),
    });
    if (target.session) await this.sessions.touch(target.session.id);
    return view(info, target.vm);
  }

  async list(principal: Principal, scope: TerminalScope): Promise<TerminalView[]> {
    const target = await this.resolve(principal, scope);
    return (await target.agent.listPtys()).map((info) => view(info, target.vm));
  }

  async get(principal: Principal, scope: TerminalScope, ptyId: string): Promise<TerminalView> {
    const target = await this.resolve(principal, scope);
    return view(await target.agent.getPty(ptyId), target.vm);
  }

  async resize(principal: Principal, scope: TerminalScope, ptyId: string, cols: number, rows: number): Promise<TerminalView> {
    const target = await this.resolve(principal, scope);
    return view(await target.agent.resizePty(ptyId, cols, rows), target.vm);
  }

  /** Kills the terminal's processes and forgets it; answers its final state. */
  async delete(principal: Principal, scope: TerminalScope, ptyId: string): Promise<TerminalView> {
    const target = await this.resolve(principal, scope);
    return view(await target.agent.killPty(ptyId), target.vm);
  }

  /** A single-use token that attaches one WebSocket to the terminal within {@link ATTACH_TOKEN_TTL_SECONDS}. */
  async issueAttachToken(principal: Principal, terminal: TerminalView): Promise<{ token: string; expiresInSeconds: number }> {
    const now = this.clock.now();
    await deleteExpiredAttachTokens(this.database.db, now.toISOString());
    const token = `pty_${randomBytes(32).toString('base64url')}`;
    const expiresAt = new Date(now.getTime() + ATTACH_TOKEN_TTL_SECONDS * 1000).toISOString();
    await insertAttachToken(this.database.db, {
      token_hash: hashToken(token),
      user_id: principal.userId,
      vm_id: terminal.vm_id,
      pty_id: terminal.pty_id,
      expires_at: expiresAt,
    });
    return { token, expiresInSeconds: ATTACH_TOKEN_TTL_SECONDS };
  }

  /** Spends an attach token: what it grants, or null when it is unknown, used or expired. */
  async redeemAttachToken(token: string): Promise<AttachGrant | null> {
    const grant = await takeAttachToken(this.database.db, hashToken(token));
    if (!grant || Date.parse(grant.expires_at) <= this.clock.now().getTime()) return null;
    return { userId: grant.user_id, vmId: grant.vm_id, ptyId: grant.pty_id };
  }

  /**
   * Opens a terminal's byte stream, checked against the principal or a redeemed attach token: `output` gets the
   * scrollback, then live output, then the exit; the attachment takes input and resizes. Detaching leaves the
   * terminal running. Every way in (the WebSocket route, the E2B facade) goes through here.
   */
  async attach(
    principal: Principal | null,
    scope: TerminalScope,
    ptyId: string,
    grant: AttachGrant | null,
    output: PtyOutput,
  ): Promise<{ terminal: TerminalView; attachment: PtyAttachment }> {
    let target: TerminalVm;
    if (principal) {
      target = await this.resolve(principal, scope);
    } else if (grant) {
      // Ownership checks read only the user id; the token stands in for the user who asked for it.
      const owner = { userId: grant.userId } as Principal;
      target = await this.resolve(owner, scope);
      if (target.vm.id !== grant.vmId || grant.ptyId !== ptyId) throw new AppError('FORBIDDEN', 'this attach token is for another terminal');
    } else {
      throw new AppError(
        'NOT_AUTHENTICATED',
        'Not authenticated: send an API key (X-API-Key or Authorization: Bearer) or a connect_token query parameter from the terminal record',
        { 'WWW-Authenticate': 'Bearer' },
      );
    }
    const terminal = view(await target.agent.getPty(ptyId), target.vm);
    return { terminal, attachment: await target.agent.attachPty(ptyId, output) };
  }

  private resolve(principal: Principal, scope: TerminalScope): Promise<TerminalVm> {
    return scope.kind === 'session' ? this.sessionVm(principal, scope.sessionId, false) : this.ownedVm(principal, scope.vmId);
  }

  private async sessionVm(principal: Principal, sessionId: string, acquire: boolean): Promise<TerminalVm> {
    const session = await this.sessions.getOwned(principal, sessionId);
    if (acquire) {
      const live = await this.vms.ensureVm(principal, session);
      return { vm: live.vm, session, agent: live.agent };
    }
    const vm = await this.sessions.currentVm(session);
    if (!vm) throw new AppError('NOT_FOUND', `session ${session.id} has no VM, so no terminals`);
    return this.resumedIfPaused(principal, vm, session);
  }

  private async ownedVm(principal: Principal, vmId: string): Promise<TerminalVm> {
    const vm = await this.vms.getOwned(principal, vmId);
    const session = vm.sessionId ? await this.sessions.find(vm.sessionId) : undefined;
    return this.resumedIfPaused(principal, vm, session);
  }

  /**
   * The terminals of a VM that paused by itself are in its memory: it is resumed for them (auto-resume). One paused on
   * request stays paused (VM_GONE, as before).
   */
  private async resumedIfPaused(principal: Principal, vm: Vm, session: Session | undefined): Promise<TerminalVm> {
    if (vm.status !== 'paused' || !resumesOnTraffic(vm) || !session || session.currentVmId !== vm.id) return { vm, session, agent: this.liveAgent(vm) };
    const live = await this.vms.ensureVm(principal, session);
    return { vm: live.vm, session, agent: live.agent };
  }

  private liveAgent(vm: Vm): GuestAgent {
    const agent = this.vms.agentOf(vm);
    if (!agent) throw new AppError('VM_GONE', `VM ${vm.id} is not running (${vm.status}); its terminals ended with it`);
    return agent;
  }
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

function view(info: PtyInfo, vm: Vm): TerminalView {
  return {
    pty_id: info.id,
    session_id: vm.sessionId,
    vm_id: vm.id,
    cols: info.cols,
    rows: info.rows,
    command: info.command,
    cwd: info.cwd,
    pid: info.pid,
    status: info.status,
    exit_code: info.exitCode,
    signal: info.signal,
    created_at: info.createdAt,
    exited_at: info.exitedAt,
    attachments: info.attachments,
  };
}
