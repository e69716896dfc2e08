import type { App, RouteContext } from '../../types.ts';
import { registerCreateSession } from './create.ts';
import { registerGetSession } from './get.ts';
import { registerListSandboxes } from './sandboxes.ts';
import { registerSessionStatus } from './status.ts';
import { registerSessionUsage } from './usage.ts';

export function registerSessionRoutes(app: App, context: RouteContext): void {
  registerCreateSession(app, context);
  registerGetSession(app, context);
  registerSessionStatus(app, context);
  registerSessionUsage(app, context);
  registerListSandboxes(app, context);
}
