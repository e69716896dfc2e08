/**
 * Which guest account owns a path, and making paths owned by one: files written for a non-root account (a client
 * whose programs run as `user`) must be that account's, or its programs cannot change them.
 *
 * Done with the guest's own tools (`stat`, `chown`, `mkdir` run directly, no shell, every path after `--`) through
 * the agent's exec rather than new agent routes, for the reason file-watch.ts gives: the agent is baked into every
 * image and snapshot, and these work with the agents already running. Account names are checked here and again by
 * the agent (an exec's `user`) and by the tools themselves against the guest's /etc/passwd.
 */
import path from 'node:path/posix';
import { AppError } from './errors.ts';
import type { GuestAgent } from './vm-engine.ts';

/** A path's owning account and group, by name (numbers when the guest has no name for them). */
export interface PathOwner {
  owner: string;
  group: string;
}

/** Account names as `useradd` accepts them; anything else never reaches a guest tool. */
const ACCOUNT_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;
/** Paths per `stat` call: well under the guest's argument size limit for paths of a usual length. */
const STAT_BATCH = 256;
const TOOL_TIMEOUT_MS = 60_000;

/** Refuses an account name a guest tool could take for something else. */
export function checkAccountName(account: string): void {
  if (!ACCOUNT_NAME.test(account)) throw new AppError('BAD_REQUEST', `invalid account name ${JSON.stringify(account)}`);
}

/** Runs a guest tool; its exit code and the tail of what it printed on stderr. */
async function runTool(agent: GuestAgent, argv: string[], options: { user?: string; stdout?: (chunk: Buffer) => void } = {}) {
  let stderr = '';
  const result = await agent.exec(
    { argv, cwd: '/', timeoutMs: TOOL_TIMEOUT_MS, ...(options.user ? { user: options.user } : {}) },
    { onStdout: options.stdout ?? (() => undefined), onStderr: (chunk) => void (stderr = (stderr + chunk.toString('utf8')).slice(-4096)) },
  );
  return { exitCode: result.exitCode, stderr: stderr.trim() };
}

/** The error of a failed tool run, by what it printed. */
function toolFailure(what: string, stderr: string): AppError {
  if (/Permission denied|Operation not permitted/i.test(stderr)) return new AppError('FORBIDDEN', `${what}: ${stderr}`);
  if (/No such file or directory/i.test(stderr)) return new AppError('NOT_FOUND', `${what}: ${stderr}`);
  if (/File exists|Not a directory/i.test(stderr)) return new AppError('CONFLICT', `${what}: ${stderr}`);
  return new AppError('BAD_REQUEST', `${what}: ${stderr || 'failed'}`);
}

/** The owners of `paths` (absolute); a path that is gone by then is left out of the answer. */
export async function ownersOf(agent: GuestAgent, paths: string[]): Promise<Map<string, PathOwner>> {
  const owners = new Map<string, PathOwner>();
  for (let start = 0; start < paths.length; start += STAT_BATCH) {
    const batch = paths.slice(start, start + STAT_BATCH);
    const chunks: Buffer[] = [];
    // NUL-separated: a path may hold any other byte. A missing path makes stat exit 1 and print nothing for it.
    await runTool(agent, ['stat', '--printf', '%n\\0%U\\0%G\\0', '--', ...batch], { stdout: (chunk) => void chunks.push(chunk) });
    const fields = Buffer.concat(chunks).toString('utf8').split('\0');
    for (let index = 0; index + 2 < fields.length; index += 3) owners.set(fields[index]!, { owner: fields[index + 1]!, group: fields[index + 2]! });
  }
  return owners;
}

/** Gives `target` (not what a symlink there points to) to `account` and its login group. */
export async function chownTo(agent: GuestAgent, target: string, account: string): Promise<void> {
  checkAccountName(account);
  const { exitCode, stderr } = await runTool(agent, ['chown', '-h', '--', `${account}:`, target]);
  if (exitCode !== 0) throw toolFailure(`cannot give ${target} to ${account}`, stderr);
}

/**
 * Makes directory `directory` and its missing parents as `account` (so they are its own, and made only where it
 * may), as `mkdir -p` does. Nothing to do when the directory is there.
 */
export async function makeDirectoriesAs(agent: GuestAgent, directory: string, account: string): Promise<void> {
  checkAccountName(account);
  if (!path.isAbsolute(directory)) throw new AppError('BAD_REQUEST', `${directory} is not an absolute path`);
  const { exitCode, stderr } = await runTool(agent, ['mkdir', '-p', '--', directory], { user: account });
  if (exitCode !== 0) throw toolFailure(`cannot make ${directory} as ${account}`, stderr);
}
