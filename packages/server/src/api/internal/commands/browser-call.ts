/**
 * `browser.call`: another node received a call for a browser session whose page this node holds
 * (core/cluster/browser-router.ts). The argument was validated with the public route's very schema (the command's
 * schema embeds it); the public route's rules across fields are checked here too, so a signed command still cannot
 * hand the service anything a user could not have sent it. The local service checks the session's owner again.
 */
import { BROWSER_CALLS, type InternalCommandOf } from '../../../contract/cluster-commands.ts';
import type { Principal } from '../../../core/authenticator.ts';
import type { Services } from '../../../services.ts';
import { checkInteraction } from '../../routes/browser/interactions.ts';

export function runBrowserCall(services: Services, { principal, call }: InternalCommandOf<'browser.call'>): Promise<unknown> {
  const { interaction } = BROWSER_CALLS[call.method];
  if (interaction) checkInteraction(interaction, call.argument);
  const service = services.sandbox.browserService;
  const method = service[call.method] as (principal: Principal, argument: unknown) => Promise<unknown>;
  return method.call(service, principal, call.argument);
}
