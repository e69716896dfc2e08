/**
 * `execvp`-style program lookup, done by the agent so that "command not found" is a clear error code instead of
 * a wrapper shell's exit status 127.
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';

/** The absolute path of `program` (looked up in `pathEnv` unless it contains a slash), or null. */
export async function resolveExecutable(program: string, pathEnv: string, cwd: string): Promise<string | null> {
  if (program.length === 0) return null;
  if (program.includes('/')) {
    const candidate = isAbsolute(program) ? program : resolve(cwd, program);
    return (await isExecutableFile(candidate)) ? candidate : null;
  }
  for (const dir of pathEnv.split(':')) {
    // An empty PATH entry means the current directory, as in execvp.
    const candidate = join(dir === '' ? cwd : resolve(cwd, dir), program);
    if (await isExecutableFile(candidate)) return candidate;
  }
  return null;
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
