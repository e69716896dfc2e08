/**
 * The host's half of a template's git_clone (`git/bare-clone.ts`) against a real `git daemon` on loopback, and the
 * core's checks of git URLs and branch names: a loopback host is refused unless allowed, naming the setting; a
 * branch is cloned alone; an unknown branch and a repository over the size cap fail saying so; the archive is a
 * bare repository that git can clone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { checkGitUrl, isBranchName } from '../../src/core/templates.ts';
import { repositoryName, RepositoryFetchError } from '../../src/core/template-build-steps.ts';
import { createGitFetcher } from '../../src/git/bare-clone.ts';
import { runCommand } from '../../src/image/run-command.ts';
import { startGitServer, type TestGitServer } from './git-fixture.ts';

describe('git fetch for template builds', () => {
  let git: TestGitServer;
  let scratch: string;
  const fetcher = (options: { allowPrivate?: boolean; maxBytes?: number } = {}) =>
    createGitFetcher({ allowPrivate: options.allowPrivate ?? true, timeoutMs: 60_000, maxBytes: options.maxBytes ?? 64 * 2 ** 20, scratchDir: scratch });
  const fetch = (options: Parameters<typeof fetcher>[0], branch: string | null = null, url = git.url) =>
    fetcher(options).fetch({ url, branch, signal: new AbortController().signal, onLine: () => {} });
  const failure = async (promise: Promise<unknown>) => {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof RepositoryFetchError, `expected a RepositoryFetchError, got ${String(error)}`);
    return error;
  };

  before(async () => {
    git = await startGitServer('sample', { 'README.md': 'hello\n' });
    scratch = await mkdtemp(join(tmpdir(), 'sandboxd-git-fetch-test-'));
  });
  after(async () => {
    await git?.stop();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  test('a loopback host is refused unless SANDBOXD_TEMPLATE_GIT_ALLOW_PRIVATE', async () => {
    const error = await failure(fetch({ allowPrivate: false }));
    assert.match(error.message, /127\.0\.0\.1 is a loopback address.*SANDBOXD_TEMPLATE_GIT_ALLOW_PRIVATE=true/);
  });

  test('a branch is cloned alone, as a bare repository that git clones again', async () => {
    const fetched = await fetch({}, 'feature');
    try {
      assert.ok(fetched.bytes > 0);
      const dir = await mkdtemp(join(scratch, 'unpacked-'));
      await pipeline(fetched.archive(), createWriteStream(join(dir, 'repo.tar')));
      await runCommand('tar', ['--extract', '--file', join(dir, 'repo.tar'), '--directory', dir, '--one-top-level=bare.git']);
      const heads = await runCommand('git', ['--git-dir', join(dir, 'bare.git'), 'for-each-ref', '--format=%(refname)', 'refs/heads']);
      assert.deepEqual(heads.trim().split('\n'), ['refs/heads/feature']);
      await runCommand('git', ['clone', '--quiet', join(dir, 'bare.git'), join(dir, 'work')]);
      assert.equal((await runCommand('git', ['-C', join(dir, 'work'), 'log', '--oneline'])).trim().split('\n').length, 2);
    } finally {
      await fetched.dispose();
    }
  });

  test('an unknown branch and an oversized repository fail saying so, leaving nothing behind', async () => {
    assert.match((await failure(fetch({}, 'no-such-branch'))).message, /git clone failed: .*no-such-branch/);
    assert.match((await failure(fetch({ maxBytes: 1024 }))).message, /larger than 0 MiB \(SANDBOXD_TEMPLATE_GIT_MAX_MB\)/);
    const left = await runCommand('find', [scratch, '-mindepth', '1', '-maxdepth', '1', '-name', 'sandboxd-git-*']);
    assert.equal(left.trim(), '');
  });

  test('git URLs and branch names: what a tool could misread is refused', () => {
    assert.equal(checkGitUrl('https://git.example.com/team/app.git'), 'https://git.example.com/team/app.git');
    for (const bad of [
      'file:///etc',
      'ssh://git@example.com/r.git',
      'ext::sh -c id',
      'https://u:p@example.com/r.git',
      'https://example.com/',
      'https://example.com/a b',
      '-u/x',
    ]) {
      assert.throws(() => checkGitUrl(bad), /git_clone_url/, bad);
    }
    for (const good of ['main', 'release/1.2', 'feature-x']) assert.ok(isBranchName(good), good);
    for (const bad of ['-x', '--upload-pack=x', 'a..b', 'a b', 'x.lock', '.hidden', 'a//b', '@', 'a@{1}', 'x~1']) assert.ok(!isBranchName(bad), bad);
    assert.equal(repositoryName('https://example.com/team/app.git'), 'app');
    assert.equal(repositoryName('https://example.com/team/..'), 'repository', 'the URL resolves to no repository');
    assert.equal(repositoryName('git://example.com/a%20b.git'), 'a-b');
  });
});
