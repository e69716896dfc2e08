/**
 * POST /internal/v1/browser/call/{call}: another node received a call for a browser session whose page this node
 * holds (core/cluster/browser-router.ts). Served on the internal listener only, whose hooks (signed-request.ts)
 * admit only a request signed for this node, body included; the principal in the body is trusted because the
 * whole body is signed, and ownership is checked here again by the local service.
 *
 * The call's arguments are validated here again, with the very schemas (and cross-field checks) of the public
 * route that took them: one route per call, so each body has its own schema and a signed request still cannot
 * hand the service anything a user could not have sent it.
 */
import { Type, type TSchema } from 'typebox';
import type { Principal } from '../../core/authenticator.ts';
import { REMOTE_BROWSER_PATH, SESSION_BOUND_CALLS, type SessionBoundCall } from '../../core/cluster/browser-router.ts';
import type { Services } from '../../services.ts';
import { INTERACTIONS } from '../routes/browser/interactions.ts';
import { BrowserSessionIdParams } from '../routes/browser/schemas.ts';
import type { App } from '../types.ts';
import { SignedPrincipal } from './signed-principal.ts';

/** The public interaction of a call (`fillCredential` is `/v1/browser/interactions/fill-credential`). */
function interactionOf(call: SessionBoundCall): (typeof INTERACTIONS)[number] | undefined {
  const action = call.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
  return INTERACTIONS.find((interaction) => interaction.action === action);
}

/** The schema of a call's one argument: the public route's body, or (close) its session id parameter. */
function argumentSchema(call: SessionBoundCall): TSchema {
  if (call === 'closeSession') return BrowserSessionIdParams.properties.session_id;
  const interaction = interactionOf(call);
  if (!interaction) throw new Error(`browser call ${call} has no public interaction to take its schema from`);
  return interaction.body;
}

/** The browser request schemas the call bodies refer to, registered once on the app that serves them. */
export const INTERNAL_BROWSER_SCHEMAS: TSchema[] = SESSION_BOUND_CALLS.filter((call) => call !== 'closeSession').map(argumentSchema);

export function registerInternalBrowserCallRoute(app: App, services: Services): void {
  for (const call of SESSION_BOUND_CALLS) {
    const schema = argumentSchema(call);
    const id = (schema as { $id?: string }).$id;
    const check = interactionOf(call)?.check;
    app.post(
      `${REMOTE_BROWSER_PATH}/${call}`,
      { schema: { body: Type.Object({ principal: SignedPrincipal, args: Type.Tuple([id ? Type.Ref(id) : schema]) }) } },
      async (request) => {
        const { principal, args } = request.body as { principal: Principal; args: [unknown] };
        check?.(args[0] as never);
        const service = services.sandbox.browserService;
        const method = service[call] as (p: Principal, argument: unknown) => Promise<unknown>;
        return method.call(service, principal, args[0]);
      },
    );
  }
}
