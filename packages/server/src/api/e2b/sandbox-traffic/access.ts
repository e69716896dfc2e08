/**
 * Who may use a sandbox's ports. The in-sandbox daemon (envd) takes the sandbox's access token
 * (`X-Access-Token`, handed out by create and connect); the sandbox's other ports are open to anyone who knows
 * its id, as on E2B, unless it was created with `network.allowPublicTraffic: false`, when they take its traffic
 * token (`E2B-Traffic-Access-Token`) or its access token. Either way the caller acts as the sandbox's owner, within
 * that one sandbox: every core call checks ownership as for the owner's own API key.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Principal } from '../../../core/authenticator.ts';
import { AppError, notFound } from '../../../core/errors.ts';
import type { Session } from '../../../model.ts';
import type { Services } from '../../../services.ts';
import { clientDataOf, sandboxStateOf, type SandboxState } from '../wire.ts';
import { resumesOnTraffic } from '../../../core/vms/index.ts';
import type { SandboxTarget } from './rewrite.ts';

/** The caller of a sandbox request once let in: the owner's principal and the session (the sandbox). */
export interface SandboxCaller {
  principal: Principal;
  session: Session;
  target: SandboxTarget;
  /** The sandbox's state when it was admitted: null when it is gone (its VM was killed or its timeout ended). */
  state: SandboxState | null;
  /** A paused sandbox that its traffic resumes (it was created with autoPause, or has auto_pause): auto-resume. */
  resumes: boolean;
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
}

const unauthenticated = (message: string) => new AppError('NOT_AUTHENTICATED', message);

/**
 * Lets a request to the sandbox's daemon in, or throws: 401 without the sandbox's access token (checked before
 * the sandbox is looked up, so a wrong token tells nothing about which ids exist), 404 when the sandbox is gone.
 */
export async function admitToDaemon(services: Services, target: SandboxTarget, headers: IncomingHttpHeaders): Promise<SandboxCaller> {
  if (!services.sessionTokens.matches('access', target.sandboxId, headerOf(headers, 'x-access-token'))) {
    throw unauthenticated(`send sandbox ${target.sandboxId}'s access token (envdAccessToken from create or connect) as X-Access-Token`);
  }
  return callerOf(services, target);
}

/**
 * Lets a request to one of the sandbox's other ports in: anyone when its traffic is public, else its traffic or
 * access token. 404 when the sandbox is gone (looked up first: public traffic needs the sandbox's settings).
 */
export async function admitToPort(services: Services, target: SandboxTarget, headers: IncomingHttpHeaders): Promise<SandboxCaller> {
  const session = await services.sandbox.sessions.find(target.sandboxId);
  if (!session) throw notFound(`sandbox ${target.sandboxId}`);
  const open =
    clientDataOf(session).publicTraffic ||
    services.sessionTokens.matches('traffic', session.id, headerOf(headers, 'e2b-traffic-access-token')) ||
    services.sessionTokens.matches('access', session.id, headerOf(headers, 'x-access-token'));
  if (!open) throw new AppError('FORBIDDEN', `sandbox ${target.sandboxId} does not take public traffic: send its E2B-Traffic-Access-Token`);
  return requireRunning(await callerOfSession(services, session, target));
}

/**
 * The caller, if its sandbox runs: a sandbox that is gone is not found (its session would otherwise get a new VM
 * on the first command). A paused one is resumed by `Sandbox.connect`, and by its traffic when it paused by itself
 * (autoPause at its timeout, or `auto_pause`): the call that needs it then resumes it (auto-resume).
 */
export function requireRunning(caller: SandboxCaller): SandboxCaller {
  const id = caller.session.id;
  if (caller.state === null) throw new AppError('NOT_FOUND', `sandbox ${id} is not running: it was killed or its timeout ended`);
  if (caller.state === 'paused' && !caller.resumes) throw new AppError('CONFLICT', `sandbox ${id} is paused: resume it with Sandbox.connect() first`);
  return caller;
}

/** Whether a request carries the sandbox's access token (what running code in the code interpreter takes). */
export function hasAccessToken(services: Services, caller: SandboxCaller, headers: IncomingHttpHeaders): boolean {
  return services.sessionTokens.matches('access', caller.session.id, headerOf(headers, 'x-access-token'));
}

/** The caller of an admitted request: the sandbox's owner (404 when the session does not exist). */
export async function callerOf(services: Services, target: SandboxTarget): Promise<SandboxCaller> {
  const session = await services.sandbox.sessions.find(target.sandboxId);
  if (!session) throw notFound(`sandbox ${target.sandboxId}`);
  return callerOfSession(services, session, target);
}

async function callerOfSession(services: Services, session: Session, target: SandboxTarget): Promise<SandboxCaller> {
  const vm = await services.sandbox.sessions.currentVm(session);
  const state = sandboxStateOf(vm);
  return { principal: await services.authenticator.principalOfSessionOwner(session), session, target, state, resumes: !!vm && resumesOnTraffic(vm) };
}
