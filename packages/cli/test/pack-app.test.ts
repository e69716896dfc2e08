// test-lane: light (packs folders on disk; no server, no VM)
/**
 * What of an app's folder is deployed: `sandbox deploy`'s archive (node-tar) and the SDK's `packAppFolder` (the
 * system's tar) hold the same paths: the folder without `.git`, `node_modules`, `__pycache__` at any depth and what
 * `.sandboxdignore` lists (patterns at any depth, anchored ones, directories only, `**`, re-includes with `!`).
 * The manifest is found under each of its names, and its absence is a usage error.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type * as Sdk from '@sandboxd/sdk';
import type * as PackApp from '../src/pack-app.ts';
import { UsageError } from '../src/errors.ts';

// `@sandboxd/sdk` resolves to its dist/ here: imported once run-cli.ts has built it again from changed sources.
let sdk: typeof Sdk;
let packApp: typeof PackApp.packApp;
let readManifest: typeof PackApp.readManifest;

/** The paths in a gzipped tar, files and directories (without a trailing slash), sorted. */
function pathsIn(tarball: Uint8Array): string[] {
  const file = path.join(os.tmpdir(), `pack-app-${process.pid}.tgz`);
  fs.writeFileSync(file, tarball);
  try {
    return execFileSync('tar', ['-tzf', file], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map((p) => p.replace(/\/$/, ''))
      .sort();
  } finally {
    fs.rmSync(file);
  }
}

describe('the folder an app deploys', () => {
  let folder: string;
  const put = (relative: string, text = 'x\n') => {
    fs.mkdirSync(path.dirname(path.join(folder, relative)), { recursive: true });
    fs.writeFileSync(path.join(folder, relative), text);
  };

  before(async () => {
    await import('./run-cli.ts');
    sdk = await import('@sandboxd/sdk');
    ({ packApp, readManifest } = await import('../src/pack-app.ts'));
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'pack-app-'));
    put('sandboxd.yaml', 'name: "hello"  # the app\nport: 8000\nstart: python3 app.py\nenv:\n  name: not-this-one\n');
    put('app.py');
    put('lib/util.py');
    put('lib/__pycache__/util.cpython-311.pyc');
    put('.git/HEAD');
    put('web/node_modules/react/index.js');
    put('build/out.js');
    put('src/build/kept.js');
    put('logs/a.log');
    put('keep.log');
    put('docs/deep/er/notes.tmp');
    put('.env');
    put('.sandboxdignore', ['# local files', '/build/', '*.log', '!keep.log', '**/er/*.tmp', '.env', ''].join('\n'));
  });
  after(() => fs.rmSync(folder, { recursive: true, force: true }));

  const expected = [
    '.sandboxdignore',
    'app.py',
    'docs',
    'docs/deep',
    'docs/deep/er',
    'keep.log',
    'lib',
    'lib/util.py',
    'logs',
    'sandboxd.yaml',
    'src',
    'src/build',
    'src/build/kept.js',
    'web',
  ];

  test('sandbox deploy packs the folder without what is ignored', async () => {
    const packed = await packApp(folder);
    assert.deepEqual(pathsIn(packed.tarball), expected);
    assert.equal(packed.entries, expected.length);
  });

  test("the SDK's packAppFolder packs the same paths", async () => {
    assert.deepEqual(pathsIn(await sdk.packAppFolder(folder)), expected);
  });

  test('the rules one by one', () => {
    const ignored = sdk.appIgnoreMatcher('/build/\n*.log\n!keep.log\ndocs/**/x\n[ab].txt\n');
    assert.equal(ignored('build', true), true);
    assert.equal(ignored('build', false), false, 'a trailing slash: directories only');
    assert.equal(ignored('src/build', true), false, 'a leading slash anchors at the folder');
    assert.equal(ignored('deep/a.log', false), true, 'no slash: at any depth');
    assert.equal(ignored('deep/keep.log', false), false, '! re-includes');
    assert.equal(ignored('docs/x', false), true, '** matches no directory too');
    assert.equal(ignored('docs/a/b/x', false), true);
    assert.equal(ignored('a.txt', false), true);
    assert.equal(ignored('c.txt', false), false);
    assert.equal(ignored('x/node_modules', true), true);
    assert.equal(ignored('x/.git', true), true);
  });

  test('the manifest: under each name, its top-level name, a usage error when there is none', () => {
    assert.equal(readManifest(folder).file, 'sandboxd.yaml');
    assert.equal(sdk.manifestName(readManifest(folder).text), 'hello');
    assert.equal(sdk.manifestName('port: 8000\nenv:\n  name: x\n'), undefined);
    const other = fs.mkdtempSync(path.join(os.tmpdir(), 'pack-app-'));
    try {
      assert.throws(
        () => readManifest(other),
        (error: unknown) => error instanceof UsageError && /no sandboxd\.yaml in/.test(error.message),
      );
      fs.writeFileSync(path.join(other, 'instavm.yml'), "name: 'from-instavm'\n");
      assert.equal(readManifest(other).file, 'instavm.yml');
      assert.equal(sdk.manifestName(readManifest(other).text), 'from-instavm');
    } finally {
      fs.rmSync(other, { recursive: true, force: true });
    }
    assert.equal(sdk.appNameOfFolder('My_App 2'), 'my-app-2');
    assert.equal(sdk.appNameOfFolder('___'), 'app');
  });
});
