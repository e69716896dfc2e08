import type { App, RouteContext } from '../../types.ts';
import { registerDownload } from './download.ts';
import { registerFileExists } from './exists.ts';
import { registerFileList } from './list.ts';
import { registerFileMkdir } from './mkdir.ts';
import { registerFileRemove } from './remove.ts';
import { registerFileRename } from './rename.ts';
import { registerFileStat } from './stat.ts';
import { registerUpload } from './upload.ts';
import { registerFileWatch } from './watch.ts';
import { registerFileWrite } from './write.ts';

export function registerFileRoutes(app: App, context: RouteContext): void {
  registerUpload(app, context);
  registerDownload(app, context);
  registerFileList(app, context);
  registerFileStat(app, context);
  registerFileExists(app, context);
  registerFileMkdir(app, context);
  registerFileRemove(app, context);
  registerFileRename(app, context);
  registerFileWrite(app, context);
  registerFileWatch(app, context);
}
