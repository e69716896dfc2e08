import type { App, RouteContext } from '../../types.ts';
import { registerEgressLog } from './log.ts';
import { registerSessionEgressPolicy } from './session-policy.ts';
import { registerVmEgressPolicy } from './vm-policy.ts';

export function registerEgressRoutes(app: App, context: RouteContext): void {
  registerVmEgressPolicy(app, context);
  registerSessionEgressPolicy(app, context);
  registerEgressLog(app, context);
}
