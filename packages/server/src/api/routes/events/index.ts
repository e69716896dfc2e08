import type { App, RouteContext } from '../../types.ts';
import { registerEventStream } from './stream.ts';

export function registerEventRoutes(app: App, context: RouteContext): void {
  registerEventStream(app, context);
}
