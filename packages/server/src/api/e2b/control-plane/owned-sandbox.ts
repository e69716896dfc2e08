/** The caller's sandbox by id: its session and its current VM while running or paused; 404 for anything else. */
import type { Principal } from '../../../core/authenticator.ts';
import { AppError, notFound } from '../../../core/errors.ts';
import type { Session, Vm } from '../../../model.ts';
import type { Services } from '../../../services.ts';
import { sandboxStateOf, type SandboxState } from '../wire.ts';

/** A live sandbox of the caller's: its session, current VM and E2B state. */
export interface OwnedSandbox {
  session: Session;
  vm: Vm;
  state: SandboxState;
}

/**
 * The caller's running or paused sandbox `sandboxID`. Another user's id, an unknown one and a sandbox whose VM
 * ended are all the same 404 (the SDK raises `SandboxNotFoundError` on it).
 */
export async function ownedSandbox(services: Services, principal: Principal, sandboxID: string): Promise<OwnedSandbox> {
  // The core words it as a session; E2B's caller asked for a sandbox.
  const { session, vm } = await services.sandbox.sessions.getOwnedWithVm(principal, sandboxID).catch((error: unknown) => {
    throw error instanceof AppError && error.code === 'NOT_FOUND' ? notFound(`sandbox ${sandboxID}`) : error;
  });
  const state = sandboxStateOf(vm);
  if (!vm || !state) throw notFound(`sandbox ${sandboxID}`);
  return { session, vm, state };
}
