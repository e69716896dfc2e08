import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildTmpDir, layerDir, layerLockPath } from '../../src/image/cache-layout.ts';
import { ensureLayer } from '../../src/image/layer-store.ts';
import { ProgressReporter } from '../../src/image/progress.ts';
import type { ImageBuildProgress } from '../../src/image/types.ts';

describe('layer cache', () => {
  let cacheDir: string;
  before(async () => {
    cacheDir = await mkdtemp(join(tmpdir(), 'sandboxd-layer-test-'));
  });
  after(async () => {
    await rm(cacheDir, { recursive: true, force: true });
  });

  test('concurrent requests for one layer build it once and all get the finished directory', async () => {
    let builds = 0;
    const build = async (dir: string): Promise<void> => {
      builds++;
      await new Promise((resolve) => setTimeout(resolve, 200));
      await writeFile(join(dir, 'content'), 'x');
    };
    const progress = new ProgressReporter();
    const results = await Promise.all([1, 2, 3].map(() => ensureLayer({ cacheDir, layer: 'base', hash: 'concurrent', progress, build })));
    assert.equal(builds, 1);
    assert.deepEqual(results.map((result) => result.built).sort(), [false, false, true]);
    for (const result of results) assert.equal((await stat(join(result.dir, 'content'))).size, 1);
    assert.equal((await stat(layerDir(cacheDir, 'base', 'concurrent'))).mode & 0o777, 0o755);
  });

  test('a failed build leaves neither a layer nor a temporary directory, and the next call builds again', async () => {
    const progress = new ProgressReporter();
    await assert.rejects(
      ensureLayer({
        cacheDir,
        layer: 'kernel',
        hash: 'fails',
        progress,
        build: async (dir) => {
          await writeFile(join(dir, 'half'), 'x');
          throw new Error('boom');
        },
      }),
      /boom/,
    );
    await assert.rejects(stat(layerDir(cacheDir, 'kernel', 'fails')), { code: 'ENOENT' });
    assert.deepEqual(
      (await readdir(buildTmpDir(cacheDir))).filter((name) => name.startsWith('kernel-fails-')),
      [],
    );
    const result = await ensureLayer({ cacheDir, layer: 'kernel', hash: 'fails', progress, build: async () => {} });
    assert.equal(result.built, true);
  });

  test('leftovers of a build that died are removed by the next build of that layer', async () => {
    const leftover = join(buildTmpDir(cacheDir), 'guest-dead-AbC123');
    await mkdir(leftover, { recursive: true });
    await writeFile(join(leftover, 'rootfs.ext4'), 'partial');
    const unrelated = join(buildTmpDir(cacheDir), 'guest-other-XyZ789');
    await mkdir(unrelated, { recursive: true });
    await ensureLayer({ cacheDir, layer: 'guest', hash: 'dead', progress: new ProgressReporter(), build: async () => {} });
    await assert.rejects(stat(leftover), { code: 'ENOENT' });
    await stat(unrelated);
  });

  test('a build in another process is waited for and its result reused', async () => {
    const hash = 'other-process';
    const lockPath = layerLockPath(cacheDir, 'base', hash);
    await mkdir(join(cacheDir, 'images', 'locks'), { recursive: true });
    // Another process takes the lock, "builds" the layer (mkdir) and holds the lock a little longer.
    const target = layerDir(cacheDir, 'base', hash);
    const holder = spawn('flock', ['--exclusive', lockPath, 'sh', '-c', 'sleep 1; mkdir -p "$0"; sleep 0.2', target], { stdio: 'ignore' });
    const exited = new Promise((resolve) => holder.once('close', resolve));
    while (spawnSync('flock', ['--nonblock', lockPath, 'true']).status === 0) await new Promise((resolve) => setTimeout(resolve, 20));

    const events: ImageBuildProgress[] = [];
    let builds = 0;
    // The layer does not exist yet when we look, so we go for the lock, wait, and then find it built.
    const result = await ensureLayer({
      cacheDir,
      layer: 'base',
      hash,
      progress: new ProgressReporter((event) => events.push(event)),
      build: async () => {
        builds++;
      },
    });
    await exited;
    assert.equal(builds, 0);
    assert.equal(result.built, false);
    assert.deepEqual(
      events.map((event) => event.type),
      ['lock-wait', 'layer-cached'],
    );
  });
});
