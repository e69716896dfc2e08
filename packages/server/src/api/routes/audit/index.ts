import type { App, RouteContext } from '../../types.ts';
import { registerListAuditEvents } from './list.ts';

export function registerAuditRoutes(app: App, context: RouteContext): void {
  registerListAuditEvents(app, context);
}
