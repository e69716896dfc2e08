import type { App, RouteContext } from '../../types.ts';
import { registerCreateVm } from './create.ts';
import { registerDeleteVm } from './delete.ts';
import { registerGetVm } from './get.ts';
import { registerListVms } from './list.ts';

export function registerVmRoutes(app: App, context: RouteContext): void {
  registerCreateVm(app, context);
  registerListVms(app, context);
  registerGetVm(app, context);
  registerDeleteVm(app, context);
}
