/**
 * The host's half of a template's `git_clone` (`RepositoryFetcher`): `git clone --bare --single-branch` of the one
 * URL a build names, by argv, into a private temporary directory, within a time limit and a size cap.
 *
 * What a user's URL could make the host do is kept small:
 * - schemes http, https and git only (`protocol.allow=never` plus those three: no `file://`, `ext::`, ssh);
 * - the host name is resolved once and refused when any address is loopback, private, link-local or metadata
 *   (`host/public-host.ts`, unless SANDBOXD_TEMPLATE_GIT_ALLOW_PRIVATE), and git connects to the address that was
 *   checked (`http.curloptResolve` pins it for http(s); a git:// URL is rewritten to the address), so a second DNS
 *   answer cannot send it elsewhere; redirects are not followed;
 * - no credentials: no prompt (GIT_TERMINAL_PROMPT=0), no helper, no system or user configuration, HOME a fresh
 *   empty directory; a bare clone checks nothing out and runs no hook.
 */
import { spawn } from 'node:child_process';
import { lstat, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { RepositoryFetchError, type FetchedRepository, type RepositoryFetcher } from '../core/template-build-steps.ts';
import { ImageBuildError } from '../image/errors.ts';
import { runCommand } from '../image/run-command.ts';
import { ForbiddenHostError, resolvePublicHost, UnresolvableHostError } from '../host/public-host.ts';

export interface GitFetcherOptions {
  /** Allow hosts on loopback, private, link-local and metadata addresses (SANDBOXD_TEMPLATE_GIT_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** The whole clone, connection included. */
  timeoutMs: number;
  /** The bare clone's size on disk; the clone is stopped beyond it. */
  maxBytes: number;
  /** Where the temporary clones go (default the system's temporary directory). */
  scratchDir?: string;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443, 'git:': 9418 };
/** How often the clone's size is measured while it runs. */
const SIZE_CHECK_MS = 500;

export function createGitFetcher(options: GitFetcherOptions): RepositoryFetcher {
  return { fetch: (request) => fetchBareClone(options, request) };
}

async function fetchBareClone(
  options: GitFetcherOptions,
  request: { url: string; branch: string | null; signal: AbortSignal; onLine: (line: string) => void },
): Promise<FetchedRepository> {
  const url = new URL(request.url);
  if (!(url.protocol in DEFAULT_PORTS)) throw new RepositoryFetchError(`only http, https and git URLs can be cloned, not ${url.protocol}`);
  if (url.username || url.password) throw new RepositoryFetchError('the URL must not hold credentials');
  const host = url.hostname;
  let address: string;
  try {
    [address] = (await resolvePublicHost(host, { allowPrivate: options.allowPrivate, setting: 'SANDBOXD_TEMPLATE_GIT_ALLOW_PRIVATE' })) as [string];
  } catch (error) {
    if (error instanceof ForbiddenHostError || error instanceof UnresolvableHostError) throw new RepositoryFetchError(error.message);
    throw error;
  }
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol]! : Number(url.port);
  const literal = address.includes(':') ? `[${address}]` : address;
  const pinned: string[] = [];
  let fetchUrl = url.toString();
  if (host.replace(/^\[(.*)\]$/, '$1') !== address) {
    if (url.protocol === 'git:') {
      const rewritten = new URL(url.toString());
      rewritten.hostname = literal;
      fetchUrl = rewritten.toString();
    } else {
      pinned.push('-c', `http.curloptResolve=${host}:${port}:${literal}`);
    }
  }

  const scratch = await mkdtemp(join(options.scratchDir ?? tmpdir(), 'sandboxd-git-'));
  const target = join(scratch, 'repository.git');
  const timeout = AbortSignal.timeout(options.timeoutMs);
  const tooLarge = new AbortController();
  const signal = AbortSignal.any([request.signal, timeout, tooLarge.signal]);
  const sizeCheck = setInterval(() => {
    void directoryBytes(target).then((bytes) => {
      if (bytes > options.maxBytes) tooLarge.abort();
    });
  }, SIZE_CHECK_MS);
  try {
    await runCommand(
      'git',
      [
        '-c',
        'protocol.allow=never',
        '-c',
        'protocol.http.allow=always',
        '-c',
        'protocol.https.allow=always',
        '-c',
        'protocol.git.allow=always',
        '-c',
        'http.followRedirects=false',
        '-c',
        'credential.helper=',
        ...pinned,
        'clone',
        '--bare',
        '--single-branch',
        ...(request.branch ? ['--branch', request.branch] : []),
        '--',
        fetchUrl,
        target,
      ],
      {
        env: {
          PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin',
          HOME: scratch,
          LC_ALL: 'C',
          GIT_TERMINAL_PROMPT: '0',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
        },
        stdout: 'lines',
        onLine: request.onLine,
        signal,
      },
    );
    const bytes = await directoryBytes(target);
    if (bytes > options.maxBytes) tooLarge.abort();
    if (tooLarge.signal.aborted) throw tooLarge.signal.reason;
    return {
      bytes,
      archive: () => tarStream(target),
      dispose: () => rm(scratch, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(scratch, { recursive: true, force: true });
    if (tooLarge.signal.aborted) {
      throw new RepositoryFetchError(
        `the repository is larger than ${Math.round(options.maxBytes / 2 ** 20)} MiB (SANDBOXD_TEMPLATE_GIT_MAX_MB); the clone was stopped`,
      );
    }
    if (timeout.aborted)
      throw new RepositoryFetchError(
        `the clone took longer than ${Math.round(options.timeoutMs / 1000)} s (SANDBOXD_TEMPLATE_GIT_TIMEOUT_SECONDS) and was stopped`,
      );
    if (request.signal.aborted) throw new RepositoryFetchError('the build was cancelled');
    if (error instanceof ImageBuildError) {
      if (error.code === 'IMAGE_TOOL_MISSING') throw new RepositoryFetchError('git is not installed on the server (apt-get install git)');
      const said = error.outputTail.filter((line) => /fatal:|error:|warning:/i.test(line)).at(-1) ?? error.outputTail.at(-1) ?? error.message;
      throw new RepositoryFetchError(
        `git clone failed: ${said.replace(fetchUrl, request.url)}`,
        error.outputTail.map((line) => line.replace(fetchUrl, request.url)),
      );
    }
    throw error;
  } finally {
    clearInterval(sizeCheck);
  }
}

/** Bytes the files under `dir` take (their sizes; 0 while it does not exist). */
async function directoryBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) total += await directoryBytes(path);
    else
      total += await lstat(path).then(
        (stats) => stats.size,
        () => 0,
      );
  }
  return total;
}

/** A tar of `dir`'s contents, erroring when tar fails (rather than ending a truncated archive quietly). */
function tarStream(dir: string): Readable {
  const out = new PassThrough();
  const child = spawn('tar', ['--create', '--file', '-', '--directory', dir, '.'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 4096) stderr += chunk;
  });
  child.stdout.pipe(out, { end: false });
  child.once('error', (error) => out.destroy(error));
  child.once('close', (code) => {
    if (code === 0) out.end();
    else out.destroy(new Error(`tar of the repository failed (status ${code}): ${stderr.trim()}`));
  });
  out.once('close', () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return out;
}
