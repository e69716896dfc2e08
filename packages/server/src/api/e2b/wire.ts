/**
 * The E2B-compatible API's fixed words: its ports, the envd version it answers as, and how a sandboxd session looks
 * as an E2B sandbox. A sandbox is a session (its id is the sandbox id); its state is its current VM's.
 */
import type { Session, Vm } from '../../model.ts';

/** The in-sandbox daemon's port (its Connect RPC and /files API); E2B's SDK names it in every request. */
export const ENVD_PORT = 49983;
/** The code interpreter's port (`@e2b/code-interpreter`'s /execute and /contexts). */
export const CODE_INTERPRETER_PORT = 49999;
/**
 * The envd version sandboxes answer as. The SDK turns features on by version: 0.5.7 has the default user
 * (`user`), stdin, CloseStdin, recursive watch and octet-stream uploads; 0.6.2's file metadata (extended
 * attributes) is not offered, so the SDK refuses it itself with its own error.
 */
export const ENVD_VERSION = '0.5.7';
/** The template a sandbox gets when the caller names none (E2B's default). */
export const DEFAULT_TEMPLATE = 'base';
/** The code interpreter's template (`@e2b/code-interpreter`'s default). */
export const CODE_INTERPRETER_TEMPLATE = 'code-interpreter-v1';
/** The account commands run as when the caller names none (E2B's `user`, uid 1000, home /home/user). */
export const DEFAULT_USER = 'user';

/** What the facade keeps with a session it made (`Session.clientData`). */
export interface E2bClientData {
  /** The template name the caller asked for (`base`, `code-interpreter-v1`, or one of theirs). */
  template: string;
  /** Whether the sandbox's ports answer anyone who knows its id (E2B's default) or only with its traffic token. */
  publicTraffic: boolean;
}

/** The facade's data of a session; a session made through the native API gets E2B's defaults. */
export function clientDataOf(session: Session): E2bClientData {
  const data = (session.clientData ?? {}) as Partial<E2bClientData>;
  return {
    template: typeof data.template === 'string' ? data.template : DEFAULT_TEMPLATE,
    publicTraffic: data.publicTraffic !== false,
  };
}

export type SandboxState = 'running' | 'paused';

/** The E2B state of a session's current VM, or null when the sandbox is gone (no VM, or it ended). */
export function sandboxStateOf(vm: Vm | undefined | null): SandboxState | null {
  if (!vm) return null;
  if (vm.status === 'active' || vm.status === 'starting') return 'running';
  if (vm.status === 'paused') return 'paused';
  return null;
}
