/**
 * "Make the VM ready for its session", declared once: what runs before a starting VM can send anything, the steps
 * a new VM goes through before anyone gets it (in `VM_READY_ORDER`), and what runs when a paused VM comes back.
 * The areas that own a step (egress, the vault, executions, computer use) provide it; services.ts wires them here
 * in one place, and the VM service runs them (acquisition.ts, capture.ts).
 */
import type { Session, Vm } from '../../model.ts';
import { installGuestCa } from '../vault/vault-ca.ts';
import { pythonContextOf, type LiveVm, type VmNetworkHook, type VmReadyHook } from './types.ts';

/** The steps a new VM goes through before it is handed out, in the order they run (`VM_READY_ORDER`). */
export interface VmReadySteps {
  /**
   * Its egress policy, applied before it ran (`beforeRun`), is recorded as the VM's own and applied again if it
   * changed meanwhile (a PUT while it started wins); a policy that cannot be enforced kills it (fail closed).
   */
  egress: VmReadyHook;
  /** A member of private networks gets their members' names in its /etc/hosts (core/networks.ts). */
  network: VmReadyHook;
  /** A vault session's VM trusts the deployment's CA, before any of its code can make a TLS connection. */
  vaultCa: VmReadyHook;
  /** The session's env goes into its Python context, once per VM (commands get it on every call). */
  sessionEnv: VmReadyHook;
  /** A desktop session that asked for another screen size gets it. */
  desktopScreen: VmReadyHook;
}

/** The order of the ready steps: the network is settled first, then what the session's code will rely on. */
export const VM_READY_ORDER = ['egress', 'network', 'vaultCa', 'sessionEnv', 'desktopScreen'] as const satisfies readonly (keyof VmReadySteps)[];

/** Everything that makes a VM ready for its session (see the module comment). */
export interface VmReadiness {
  /** Before a new or resumed VM can send anything: its egress rules (a rejection fails the start). */
  beforeRun: VmNetworkHook;
  /** A start or resume on this node failed after `beforeRun` may have run. */
  startFailed(vmId: string): void;
  /** After a new VM started, before anyone gets it: the steps, in `VM_READY_ORDER`. */
  ready: VmReadySteps;
  /**
   * After a paused VM runs again, before its caller gets it (its hypervisor is a new process: what was bound to
   * the old one, like egress rules, is bound again). A rejection kills the VM.
   */
  resumed(vm: Vm): Promise<void>;
}

/** Until services.ts wires the real steps (and in a service built without them): nothing to do. */
export const NO_READINESS: VmReadiness = {
  beforeRun: async () => {},
  startFailed: () => {},
  ready: { egress: async () => {}, network: async () => {}, vaultCa: async () => {}, sessionEnv: async () => {}, desktopScreen: async () => {} },
  resumed: async () => {},
};

/** Runs the ready steps of a new VM in order; the first failure stops them and fails the acquisition. */
export async function runReadySteps(steps: VmReadySteps, session: Session, live: LiveVm): Promise<void> {
  for (const step of VM_READY_ORDER) await steps[step](session, live);
}

/** Tells `readiness` a start failed; its own failure must not hide the start's error. */
export function reportStartFailed(readiness: VmReadiness, vmId: string): void {
  try {
    readiness.startFailed(vmId);
  } catch {
    // the start's own error is what the caller gets
  }
}

/** The `sessionEnv` step: the session's env into the Python context the VM's session code runs in. */
export async function applySessionEnv(session: Session, live: LiveVm): Promise<void> {
  if (Object.keys(session.env).length === 0) return;
  // JSON twice: the outer one makes a Python string literal of the inner one, so no value can break out of it.
  const env = JSON.stringify(JSON.stringify(session.env));
  await live.agent.runPython({
    contextId: pythonContextOf(live.vm) ?? session.id,
    code: `import os as _os, json as _json\n_os.environ.update(_json.loads(${env}))\ndel _os, _json`,
  });
}

/** The `vaultCa` step, over the vault's view of sessions and the deployment's CA. */
export function trustVaultCa(vault: { sessionHasVault(sessionId: string): Promise<boolean> }, ca: { material(): Promise<{ certPem: string }> }): VmReadyHook {
  return async (session, live) => {
    if (await vault.sessionHasVault(session.id)) await installGuestCa(live.agent, (await ca.material()).certPem);
  };
}
