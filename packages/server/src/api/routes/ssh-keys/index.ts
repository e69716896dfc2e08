import type { App, RouteContext } from '../../types.ts';
import { registerCreateSshKey } from './create.ts';
import { registerDeleteSshKey } from './delete.ts';
import { registerGetSshKey } from './get.ts';
import { registerSshInfo } from './info.ts';
import { registerListSshKeys } from './list.ts';

export function registerSshKeyRoutes(app: App, context: RouteContext): void {
  registerCreateSshKey(app, context);
  registerListSshKeys(app, context);
  registerGetSshKey(app, context);
  registerDeleteSshKey(app, context);
  registerSshInfo(app, context);
}
