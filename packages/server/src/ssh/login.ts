/**
 * Who an SSH login is and what it reaches. The SSH user name names a VM (`vm-…`) or a session (its UUID); the
 * offered key must be registered by the user who owns it, and ownership is checked by the same services the HTTP
 * routes use (`getOwned`), so the rules are identical. Every refusal looks the same to the client: an unknown
 * name, another user's VM, an ended VM and an unknown key are all "permission denied (publickey)".
 */
import type { Principal } from '../core/authenticator.ts';
import { AppError } from '../core/errors.ts';
import type { Session, Vm } from '../model.ts';
import type { SessionService } from '../core/sessions.ts';
import type { SshKey, SshKeyService } from '../core/ssh-keys.ts';
import type { UserService } from '../core/users.ts';
import type { GuestAgent } from '../core/vm-engine.ts';
import type { VmService } from '../core/vms/index.ts';

export interface LoginServices {
  users: UserService;
  sshKeys: SshKeyService;
  sessions: SessionService;
  vms: VmService;
}

/** What a login reaches: one VM, or a session (whose current VM, started when it has none, serves each channel). */
export type LoginScope = { kind: 'vm'; vmId: string } | { kind: 'session'; sessionId: string };

/** An authenticated login. */
export interface Login {
  principal: Principal;
  key: SshKey;
  scope: LoginScope;
}

/** The VM a channel acts on, with its agent and (when it has one) its session. */
export interface LoginVm {
  vm: Vm;
  session: Session | undefined;
  agent: GuestAgent;
}

/** The owner of what `username` names, when it names a live VM or a session; else null. */
async function ownerOf(services: LoginServices, username: string): Promise<{ userId: number; scope: LoginScope } | null> {
  if (username.startsWith('vm-')) {
    const vm = await services.vms.find(username);
    // A paused VM is not reachable by name (its session's name resumes it); an ended one never is.
    if (!vm || vm.status !== 'active') return null;
    return { userId: vm.userId, scope: { kind: 'vm', vmId: vm.id } };
  }
  if (!/^[0-9a-f-]{36}$/i.test(username)) return null;
  const session = await services.sessions.find(username.toLowerCase());
  return session ? { userId: session.userId, scope: { kind: 'session', sessionId: session.id } } : null;
}

/** The login `username` with the key `blob` stands for, or null to refuse it. The caller checks the signature. */
export async function resolveLogin(services: LoginServices, username: string, blob: Buffer): Promise<Login | null> {
  const owner = await ownerOf(services, username);
  if (!owner) return null;
  const key = await services.sshKeys.findForLogin(owner.userId, blob);
  if (!key) return null;
  const user = await services.users.get(owner.userId);
  if (!user) return null;
  const principal: Principal = { userId: user.id, username: user.username, plan: user.plan, isAdmin: user.isAdmin, via: 'ssh_key', apiKeyId: null };
  // Through the routes' own ownership check: it must agree, or the login is refused.
  try {
    if (owner.scope.kind === 'vm') await services.vms.getOwned(principal, owner.scope.vmId);
    else await services.sessions.getOwned(principal, owner.scope.sessionId);
  } catch {
    return null;
  }
  return { principal, key, scope: owner.scope };
}

/**
 * The VM a new channel of `login` acts on. A session without a running VM gets one, as an execution would; a
 * VM login whose VM has ended since is refused. In a cluster, a VM on another node is reached through it
 * (`agentOf` answers that node's agent).
 */
export async function channelVm(services: LoginServices, login: Login): Promise<LoginVm> {
  if (login.scope.kind === 'session') {
    const session = await services.sessions.getOwned(login.principal, login.scope.sessionId);
    const live = await services.vms.ensureVm(login.principal, session);
    await services.sessions.touch(session.id);
    return { vm: live.vm, session, agent: live.agent };
  }
  const vm = await services.vms.getOwned(login.principal, login.scope.vmId);
  const agent = services.vms.agentOf(vm);
  if (!agent) throw new AppError('VM_GONE', `VM ${vm.id} is not running (${vm.status})`);
  const session = vm.sessionId ? await services.sessions.find(vm.sessionId) : undefined;
  if (session) await services.sessions.touch(session.id);
  return { vm, session, agent };
}
