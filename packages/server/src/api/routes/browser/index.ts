/**
 * The browser operations: sessions driven by interactions, one-shot renders, usage, stored screenshots and
 * stored credentials. Every route validates its body with the contract's schema (`contract/browser/`), checks the
 * contract's rules across fields, and hands it to the browser service (`BrowserApi`, `core/browser/browser-api.ts`)
 * as it is.
 */
import type { App, RouteContext } from '../../types.ts';
import { registerBrowserAuthTest } from './auth-test.ts';
import { registerBrowserCapabilities } from './capabilities.ts';
import { registerCloseBrowserSession } from './close-session.ts';
import { registerCreateBrowserCredential } from './create-credential.ts';
import { registerCreateBrowserSession } from './create-session.ts';
import { registerDeleteBrowserCredential } from './delete-credential.ts';
import { registerGetBrowserCredential } from './get-credential.ts';
import { registerGetBrowserSession } from './get-session.ts';
import { registerBrowserInteractions } from './interactions.ts';
import { registerListBrowserCredentials } from './list-credentials.ts';
import { registerListBrowserSessions } from './list-sessions.ts';
import { registerBrowserRender } from './render.ts';
import { registerStoredScreenshot } from './stored-screenshot.ts';
import { registerUpdateBrowserCredential } from './update-credential.ts';
import { registerBrowserUsage } from './usage.ts';

export function registerBrowserRoutes(app: App, context: RouteContext): void {
  registerCreateBrowserSession(app, context);
  registerListBrowserSessions(app, context);
  registerGetBrowserSession(app, context);
  registerCloseBrowserSession(app, context);
  registerBrowserCapabilities(app, context);
  registerBrowserInteractions(app, context);
  registerBrowserRender(app, context);
  registerBrowserUsage(app, context);
  registerStoredScreenshot(app, context);
  registerBrowserAuthTest(app, context);
  registerCreateBrowserCredential(app, context);
  registerListBrowserCredentials(app, context);
  registerGetBrowserCredential(app, context);
  registerUpdateBrowserCredential(app, context);
  registerDeleteBrowserCredential(app, context);
}
