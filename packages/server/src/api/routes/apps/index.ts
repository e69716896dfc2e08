import type { App, RouteContext } from '../../types.ts';
import { registerAppUrl } from './app-url.ts';
import { registerShareRoutes } from './shares.ts';

export function registerAppRoutes(app: App, context: RouteContext): void {
  registerAppUrl(app, context);
  registerShareRoutes(app, context);
}
