/**
 * Test fixture: a git repository with two commits on `main` and a `feature` branch, served read-only by a real
 * `git daemon` on a free loopback port (git:// URLs, as a build's git_clone_url names them).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../src/image/run-command.ts';
import { freePort } from '../helpers/ports.ts';

export interface TestGitServer {
  /** `git://127.0.0.1:<port>/<name>.git` */
  url: string;
  stop(): Promise<void>;
}

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'sandboxd test',
  GIT_AUTHOR_EMAIL: 'test@sandboxd.invalid',
  GIT_COMMITTER_NAME: 'sandboxd test',
  GIT_COMMITTER_EMAIL: 'test@sandboxd.invalid',
};

/** Serves a repository `name` whose `main` holds `files` (path → content) in two commits, plus a `feature` branch. */
export async function startGitServer(name: string, files: Record<string, string>): Promise<TestGitServer> {
  const root = await mkdtemp(join(tmpdir(), 'sandboxd-git-server-'));
  const work = join(root, 'work');
  const git = (...args: string[]) => runCommand('git', args, { cwd: work, env: GIT_ENV });
  await mkdir(work);
  await git('init', '--quiet', '--initial-branch=main');
  await writeFile(join(work, 'first.txt'), 'the first commit\n');
  await git('add', '.');
  await git('commit', '--quiet', '-m', 'first');
  for (const [path, content] of Object.entries(files)) await writeFile(join(work, path), content);
  await git('add', '.');
  await git('commit', '--quiet', '-m', 'second');
  await git('branch', 'feature');
  await runCommand('git', ['clone', '--quiet', '--bare', work, join(root, 'served', `${name}.git`)], { env: GIT_ENV });

  const port = await freePort();
  const child: ChildProcess = spawn(
    'git',
    ['daemon', '--reuseaddr', '--export-all', `--base-path=${join(root, 'served')}`, '--listen=127.0.0.1', `--port=${port}`, join(root, 'served')],
    { stdio: ['ignore', 'ignore', 'pipe'], env: GIT_ENV },
  );
  let output = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const url = `git://127.0.0.1:${port}/${name}.git`;
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(root, { recursive: true, force: true });
  };
  // Serving once `git ls-remote` answers.
  const deadline = Date.now() + 20_000;
  for (;;) {
    const ok = await runCommand('git', ['ls-remote', url], { env: GIT_ENV }).then(
      () => true,
      () => false,
    );
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`git daemon did not serve ${url}: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { url, stop };
}
