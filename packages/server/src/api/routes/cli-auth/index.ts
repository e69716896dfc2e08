import type { App, RouteContext } from '../../types.ts';
import { registerCliAuthApprove } from './approve.ts';
import { registerCliAuthExchange } from './exchange.ts';
import { registerCliAuthPage } from './page.ts';
import { registerCliAuthStart } from './start.ts';

export function registerCliAuthRoutes(app: App, context: RouteContext): void {
  registerCliAuthStart(app, context);
  registerCliAuthApprove(app, context);
  registerCliAuthExchange(app, context);
  registerCliAuthPage(app, context);
}
