import type { App, RouteContext } from '../../types.ts';
import { registerDownload } from './download.ts';
import { registerFileList } from './list.ts';
import { registerUpload } from './upload.ts';

export function registerFileRoutes(app: App, context: RouteContext): void {
  registerUpload(app, context);
  registerDownload(app, context);
  registerFileList(app, context);
}
