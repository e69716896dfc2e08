import type { App, RouteContext } from '../../types.ts';
import { registerDeleteSnapshot } from './delete.ts';
import { registerGetSnapshot } from './get.ts';
import { registerListSnapshots } from './list.ts';

export function registerSnapshotRoutes(app: App, context: RouteContext): void {
  registerListSnapshots(app, context);
  registerGetSnapshot(app, context);
  registerDeleteSnapshot(app, context);
}
