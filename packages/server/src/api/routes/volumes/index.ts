import type { App, RouteContext } from '../../types.ts';
import { registerCreateVolume } from './create.ts';
import { registerDeleteVolume } from './delete.ts';
import { registerGetVolume } from './get.ts';
import { registerListVolumes } from './list.ts';

export function registerVolumeRoutes(app: App, context: RouteContext): void {
  registerCreateVolume(app, context);
  registerListVolumes(app, context);
  registerGetVolume(app, context);
  registerDeleteVolume(app, context);
}
