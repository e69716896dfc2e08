import type { App, RouteContext } from '../../types.ts';
import { registerCreateApiKey } from './create.ts';
import { registerDeleteApiKey } from './delete.ts';
import { registerGetApiKey } from './get.ts';
import { registerListApiKeys } from './list.ts';
import { registerUpdateApiKey } from './update.ts';

export function registerApiKeyRoutes(app: App, context: RouteContext): void {
  registerCreateApiKey(app, context);
  registerListApiKeys(app, context);
  registerGetApiKey(app, context);
  registerUpdateApiKey(app, context);
  registerDeleteApiKey(app, context);
}
