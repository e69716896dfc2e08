/** Opens a URL in the user's browser when that is possible here; otherwise the printed URL is enough. */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function onPath(command: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/** True when a browser opener was started (xdg-open on Linux, open on macOS); it is never waited for. */
export function tryOpenBrowser(url: string): boolean {
  const opener = process.platform === 'darwin' ? onPath('open') : process.platform === 'linux' ? onPath('xdg-open') : null;
  if (!opener) return false;
  try {
    const child = spawn(opener, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}
