import type { App, RouteContext } from '../../types.ts';
import { registerCreateVm } from './create.ts';
import { registerDeleteVm } from './delete.ts';
import { registerGetVm } from './get.ts';
import { registerVmLifetime } from './lifetime.ts';
import { registerListVms } from './list.ts';
import { registerCloneVm } from './clone.ts';
import { registerPauseVm } from './pause.ts';
import { registerSnapshotVm } from './snapshot.ts';

export function registerVmRoutes(app: App, context: RouteContext): void {
  registerCreateVm(app, context);
  registerListVms(app, context);
  registerGetVm(app, context);
  registerDeleteVm(app, context);
  registerSnapshotVm(app, context);
  registerCloneVm(app, context);
  registerPauseVm(app, context);
  registerVmLifetime(app, context);
}
