import type { App, RouteContext } from '../../types.ts';
import { registerCloneSnapshot } from './clone.ts';
import { registerCreateSnapshotFromImage } from './create.ts';
import { registerDeleteSnapshot } from './delete.ts';
import { registerGetSnapshot } from './get.ts';
import { registerListSnapshots } from './list.ts';

export function registerSnapshotRoutes(app: App, context: RouteContext): void {
  registerCreateSnapshotFromImage(app, context);
  registerListSnapshots(app, context);
  registerGetSnapshot(app, context);
  registerDeleteSnapshot(app, context);
  registerCloneSnapshot(app, context);
}
