/**
 * The E2B-compatible API (docs/e2b.md): a facade over sandboxd's core, not a second path into the guest.
 * - control plane: `/e2b/…` (`E2B_API_URL`), sandboxes as sessions;
 * - a sandbox's ports: `/e2b/sandbox` (`E2B_SANDBOX_URL`, sandbox and port in headers) and
 *   `{port}-{sandboxID}.<app domain>`; port 49983 is the in-sandbox daemon (Connect RPC over sandboxd's processes
 *   and files), 49999 the code interpreter, any other the sandbox's own app.
 * The core never learns E2B's words: what the facade keeps with a session is opaque `clientData` there.
 */
import type { App, RouteContext } from '../types.ts';
import { registerControlPlane } from './control-plane/index.ts';
import { registerSandboxTraffic } from './sandbox-traffic/index.ts';

export { sandboxTrafficRewriter } from './sandbox-traffic/rewrite.ts';
export { sandboxAppUpgradeHandler } from './sandbox-traffic/app-proxy.ts';

export function registerE2bFacade(app: App, context: RouteContext): void {
  registerControlPlane(app, context);
  registerSandboxTraffic(app, context);
}
