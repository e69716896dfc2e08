/**
 * The steps of a template build that run in its build VM, after the OCI image booted: `git_clone` and
 * `post_build_cmd` (see `TemplateService`). The engine hands over the VM's agent; nothing here knows about QEMU.
 *
 * `git_clone` is fetched by the host, not by the VM: the host makes a bare clone of the one URL the build names
 * (`RepositoryFetcher`, with the SSRF rule and its limits), the bare repository goes into the VM as a tar, and the
 * VM clones that into `/workspace/<repository name>` with its own git and points `origin` at the URL. So no guest,
 * the build VM included, is ever given a route to the host or to private networks for it.
 */
import type { Readable } from 'node:stream';
import type { TemplateBuildStep } from '../model.ts';
import { TemplateBuildError, type GuestAgent } from './vm-engine.ts';

/** A repository the host fetched for a build. */
export interface FetchedRepository {
  /** Bytes of the bare clone on the host. */
  bytes: number;
  /** A tar of the bare repository, its files at the archive's root. Call once. */
  archive(): Readable;
  /** Removes the host's copy. */
  dispose(): Promise<void>;
}

/** The host side of `git_clone`. */
export interface RepositoryFetcher {
  /**
   * A bare, single-branch clone of `url` (`branch`, else the remote's default). Rejects with
   * `RepositoryFetchError`, whose message says what to change.
   */
  fetch(request: { url: string; branch: string | null; signal: AbortSignal; onLine: (line: string) => void }): Promise<FetchedRepository>;
}

/** The host could not fetch the repository (refused address, unknown branch, too large, too slow…). */
export class RepositoryFetchError extends Error {
  override name = 'RepositoryFetchError';
  constructor(
    message: string,
    readonly outputTail: string[] = [],
  ) {
    super(message);
  }
}

/** The build arguments with what is never stored: the environment's values. */
export interface BuildSteps {
  gitCloneUrl: string | null;
  gitCloneBranch: string | null;
  envs: Record<string, string>;
  postBuildCmd: string | null;
}

export interface BuildStepContext {
  fetcher: RepositoryFetcher;
  signal: AbortSignal;
  onStep(step: TemplateBuildStep): void;
  /** One line of the build log. */
  log(line: string): void;
  postBuildTimeoutMs: number;
}

/** Where the repository lands in the build VM's image. */
export const WORKSPACE_DIR = '/workspace';
/** Where the host's bare clone is unpacked in the build VM, and removed from after the clone. */
const BARE_DIR = '/var/tmp/sandboxd-git';
/** Lines of a step's output an error message carries. */
const TAIL_LINES = 30;
/** Short guest commands (git --version, the local clone, set-url). */
const GUEST_COMMAND_TIMEOUT_MS = 600_000;

/** Runs `git_clone` and `post_build_cmd` (each only when asked for) in the build VM. */
export async function runBuildSteps(agent: GuestAgent, steps: BuildSteps, context: BuildStepContext): Promise<void> {
  let cwd: string | null = null;
  if (steps.gitCloneUrl) cwd = await cloneRepository(agent, steps.gitCloneUrl, steps.gitCloneBranch, context);
  if (steps.postBuildCmd) await runPostBuildCommand(agent, steps.postBuildCmd, steps.envs, cwd, context);
}

/** The directory name a clone of `url` gets: its last path component without `.git`, in safe characters. */
export function repositoryName(url: string): string {
  const last =
    new URL(url).pathname
      .split('/')
      .filter((part) => part !== '')
      .at(-1) ?? '';
  const name = decodeURIComponent(last)
    .replace(/\.git$/, '')
    .replace(/[^A-Za-z0-9._-]/g, '-')
    .slice(0, 100);
  return name === '' || /^\.+$/.test(name) ? 'repository' : name;
}

async function cloneRepository(agent: GuestAgent, url: string, branch: string | null, context: BuildStepContext): Promise<string> {
  context.onStep('git_clone');
  const name = repositoryName(url);
  const target = `${WORKSPACE_DIR}/${name}`;
  const fail = (message: string, tail: string[] = []) => new TemplateBuildError('git_clone', message, tail.slice(-TAIL_LINES));
  // Before fetching anything: the VM clones with its own git.
  const version = await run(agent, { argv: ['git', '--version'] }, context, () => {}).catch((error: unknown) => ({ error }));
  if ('error' in version || version.exitCode !== 0) {
    const why = 'error' in version ? describe(version.error) : `exit code ${version.exitCode}`;
    throw fail(`the image has no usable git (git --version: ${why}): install git in the image, or build without git_clone_url`);
  }
  context.log(`fetching ${url}${branch ? ` (branch ${branch})` : ''} on the host`);
  let repository: FetchedRepository;
  try {
    repository = await context.fetcher.fetch({ url, branch, signal: context.signal, onLine: context.log });
  } catch (error) {
    if (error instanceof RepositoryFetchError) throw fail(`cannot fetch ${url}: ${error.message}`, error.outputTail);
    throw fail(`cannot fetch ${url}: ${describe(error)}`);
  }
  try {
    context.log(`fetched ${(repository.bytes / 2 ** 20).toFixed(1)} MiB; copying it into the build VM`);
    const bare = `${BARE_DIR}/${name}.git`;
    try {
      await agent.extractTar(bare, repository.archive());
    } catch (error) {
      throw fail(`the repository could not be copied into the build VM (${bare}): ${describe(error)}`);
    }
    const clone = await run(agent, { argv: ['git', 'clone', '--', bare, target] }, context);
    if (clone.exitCode !== 0) throw fail(`git clone in the build VM into ${target} failed (${outcome(clone)})`, clone.tail);
    const setUrl = await run(agent, { argv: ['git', '-C', target, 'remote', 'set-url', 'origin', url] }, context);
    if (setUrl.exitCode !== 0) throw fail(`git remote set-url in ${target} failed (${outcome(setUrl)})`, setUrl.tail);
    await run(agent, { argv: ['rm', '-rf', BARE_DIR] }, context).catch(() => undefined);
    context.log(`cloned into ${target}`);
    return target;
  } finally {
    await repository.dispose().catch(() => undefined);
  }
}

async function runPostBuildCommand(
  agent: GuestAgent,
  command: string,
  envs: Record<string, string>,
  clone: string | null,
  context: BuildStepContext,
): Promise<void> {
  context.onStep('post_build_cmd');
  // bash when the image has it (a login shell: the image's profile applies), else its POSIX shell.
  const shell = (await exists(agent, '/bin/bash')) ? ['/bin/bash', '-lc'] : ['/bin/sh', '-lc'];
  const cwd = clone ?? ((await exists(agent, '/root')) ? '/root' : '/');
  context.log(`running post_build_cmd with ${shell.join(' ')} in ${cwd}${Object.keys(envs).length > 0 ? ` with ${Object.keys(envs).join(', ')} set` : ''}`);
  let result: RunResult;
  try {
    result = await run(agent, { command, shell, env: envs, cwd, timeoutMs: context.postBuildTimeoutMs }, context);
  } catch (error) {
    throw new TemplateBuildError('post_build_cmd', `post_build_cmd could not be run: ${describe(error)}`);
  }
  if (result.exitCode === 0 && !result.timedOut) return;
  const how = result.timedOut
    ? `post_build_cmd ran longer than ${Math.round(context.postBuildTimeoutMs / 1000)} s (SANDBOXD_TEMPLATE_POST_BUILD_TIMEOUT_SECONDS) and was killed`
    : `post_build_cmd failed: ${outcome(result)}`;
  throw new TemplateBuildError('post_build_cmd', how, result.tail.slice(-TAIL_LINES));
}

interface RunResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  tail: string[];
}

/** Runs a program in the VM, its output lines into the build log (and the last ones kept for an error). */
async function run(
  agent: GuestAgent,
  request: { argv?: string[]; command?: string; shell?: string[]; env?: Record<string, string>; cwd?: string; timeoutMs?: number },
  context: BuildStepContext,
  onLine: (line: string) => void = context.log,
): Promise<RunResult> {
  const tail: string[] = [];
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    onLine(line);
  };
  const stdout = new LineSplitter(keep);
  const stderr = new LineSplitter(keep);
  const result = await agent.exec(
    { timeoutMs: GUEST_COMMAND_TIMEOUT_MS, ...request },
    { onStdout: (chunk) => stdout.push(chunk), onStderr: (chunk) => stderr.push(chunk) },
    context.signal,
  );
  stdout.end();
  stderr.end();
  return { exitCode: result.exitCode, signal: result.signal, timedOut: result.timedOut, tail };
}

async function exists(agent: GuestAgent, path: string): Promise<boolean> {
  return agent.stat(path).then(
    () => true,
    () => false,
  );
}

function outcome(result: RunResult): string {
  return result.exitCode === null ? `killed by ${result.signal ?? 'a signal'}` : `exit code ${result.exitCode}`;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Splits output chunks into lines (on \n or \r, so progress bars become lines too), dropping empty ones. */
export class LineSplitter {
  private pending = '';
  private readonly decoder = new TextDecoder();

  constructor(private readonly onLine: (line: string) => void) {}

  push(chunk: Uint8Array): void {
    const parts = (this.pending + this.decoder.decode(chunk, { stream: true })).split(/\r\n|\n|\r/);
    this.pending = parts.pop() ?? '';
    for (const line of parts) if (line.trim() !== '') this.onLine(line);
  }

  end(): void {
    const rest = this.pending + this.decoder.decode();
    this.pending = '';
    if (rest.trim() !== '') this.onLine(rest);
  }
}
