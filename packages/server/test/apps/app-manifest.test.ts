// test-lane: light
/**
 * The app manifest and archive checks without a VM: aliases, defaults, a 400 naming the field, and archives
 * whose entries would leave the folder (absolute paths, `..`, devices, links out) refused on the host without
 * being extracted.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { readArchiveManifest } from '../../src/core/apps/archive.ts';
import { handleOf } from '../../src/core/apps/app-service.ts';
import { parseManifest } from '../../src/core/apps/manifest.ts';
import { AppUrls } from '../../src/core/app-urls.ts';
import { AppError } from '../../src/core/errors.ts';

const DEFAULTS = { vcpus: 1, memoryMb: 512 };

function badRequest(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof AppError, String(error));
    assert.equal(error.code, 'BAD_REQUEST');
    assert.match(error.message, pattern);
    return true;
  });
}

test('aliases of the hosted service are read; defaults are applied', () => {
  const manifest = parseManifest(
    'instavm.yaml',
    'port: 8000\ncmd: python3 app.py\nbuild: pip install -r requirements.txt\nhealthcheck: /health\ncpus: 2\nmemory: 1024\nenv: { PORT: 8000, DEBUG: true }\n',
    DEFAULTS,
  );
  assert.equal(manifest.start, 'python3 app.py');
  assert.equal(manifest.install, 'pip install -r requirements.txt');
  assert.deepEqual(manifest.health_check, { path: '/health', interval_seconds: 5, timeout_seconds: 3, start_timeout_seconds: 120, failure_threshold: 3 });
  assert.equal(manifest.vcpus, 2);
  assert.equal(manifest.memory_mb, 1024);
  assert.deepEqual(manifest.env, { PORT: '8000', DEBUG: 'true' });
  assert.equal(manifest.kind, 'folder');
  assert.equal(manifest.template, 'default');
  assert.equal(manifest.replicas, 1);
  assert.equal(manifest.public, true);
});

test('a mistake is a 400 naming the file and the field', () => {
  badRequest(() => parseManifest('sandboxd.yaml', 'port: 8000\n', DEFAULTS), /sandboxd\.yaml: field start/);
  badRequest(() => parseManifest('sandboxd.yaml', 'port: 99999\nstart: x\n', DEFAULTS), /field port/);
  badRequest(() => parseManifest('sandboxd.yaml', 'port: 80\nstart: x\nhealth_check: { path: health }\n', DEFAULTS), /field health_check/);
  badRequest(() => parseManifest('sandboxd.yaml', 'port: 80\nstart: x\nreplicas: 0\n', DEFAULTS), /field replicas/);
  badRequest(() => parseManifest('sandboxd.yaml', 'port: 80\nstart: x\nstrat: y\n', DEFAULTS), /field strat is not a manifest field/);
  badRequest(() => parseManifest('sandboxd.yaml', 'port: 80\nstart: x\ncmd: y\n', DEFAULTS), /cmd names start a second time/);
  badRequest(() => parseManifest('sandboxd.yaml', 'port: 80\nstart: x\nkind: snapshot\n', DEFAULTS), /field snapshot is required/);
  badRequest(() => parseManifest('sandboxd.yaml', 'port: 80\nstart: x\nname: Hello_World\n', DEFAULTS), /field name/);
  badRequest(() => parseManifest('sandboxd.yaml', 'port: [80\n', DEFAULTS), /not valid YAML/);
  badRequest(() => parseManifest('sandboxd.yaml', '- a\n- b\n', DEFAULTS), /mapping/);
});

function archive(build: (dir: string) => string[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-archive-test-'));
  const args = build(dir);
  const out = path.join(dir, 'out.tar.gz');
  execFileSync('tar', ['-czf', out, ...args], { cwd: dir });
  return out;
}

test('the manifest is read from the archive at its root', async () => {
  const file = archive((dir) => {
    fs.mkdirSync(path.join(dir, 'src'));
    fs.writeFileSync(path.join(dir, 'src', 'sandboxd.yaml'), 'not: this one\n');
    fs.writeFileSync(path.join(dir, 'sandboxd.yaml'), 'port: 8000\nstart: x\n');
    return ['./sandboxd.yaml', './src'];
  });
  const found = await readArchiveManifest(file);
  assert.equal(found.fileName, 'sandboxd.yaml');
  assert.equal(found.text, 'port: 8000\nstart: x\n');
});

test('entries that leave the folder are refused without extracting anything', async () => {
  const absolute = archive((dir) => {
    fs.writeFileSync(path.join(dir, 'sandboxd.yaml'), 'port: 1\nstart: x\n');
    return ['-P', path.join(dir, 'sandboxd.yaml')];
  });
  await assert.rejects(readArchiveManifest(absolute), /leaves the folder/);
  const dotdot = archive((dir) => {
    fs.mkdirSync(path.join(dir, 'a'));
    fs.writeFileSync(path.join(dir, 'sandboxd.yaml'), 'port: 1\nstart: x\n');
    return ['-P', 'a/../sandboxd.yaml'];
  });
  await assert.rejects(readArchiveManifest(dotdot), /leaves the folder/);
  const link = archive((dir) => {
    fs.writeFileSync(path.join(dir, 'sandboxd.yaml'), 'port: 1\nstart: x\n');
    fs.symlinkSync('/etc/passwd', path.join(dir, 'passwd'));
    return ['sandboxd.yaml', 'passwd'];
  });
  await assert.rejects(readArchiveManifest(link), /points outside the folder/);
  const fifo = archive((dir) => {
    fs.writeFileSync(path.join(dir, 'sandboxd.yaml'), 'port: 1\nstart: x\n');
    execFileSync('mkfifo', [path.join(dir, 'pipe')]);
    return ['sandboxd.yaml', 'pipe'];
  });
  await assert.rejects(readArchiveManifest(fifo), /FIFO/);
  const none = archive((dir) => {
    fs.writeFileSync(path.join(dir, 'app.py'), 'print(1)\n');
    return ['app.py'];
  });
  await assert.rejects(readArchiveManifest(none), /no manifest at the archive's root/);
  const garbage = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-archive-test-')), 'x.tar.gz');
  fs.writeFileSync(garbage, 'not a tar');
  await assert.rejects(readArchiveManifest(garbage), /not a gzipped tar/);
});

test('app hosts never collide with VM port hosts', () => {
  const urls = new AppUrls('https://api.example.com', 'apps.example.com');
  assert.equal(urls.appUrl('hello--alice'), 'https://hello--alice.apps.example.com/');
  assert.equal(urls.parseAppHost('hello--alice.apps.example.com'), 'hello--alice');
  assert.equal(urls.parseAppHost('HELLO--u12.apps.example.com:443'), 'hello--u12');
  assert.equal(urls.parseAppHost('vm-abcdefghijklmnop-8000.apps.example.com'), null);
  assert.equal(urls.parseHost('hello--alice.apps.example.com'), null);
  assert.equal(urls.parseAppHost('hello--alice.example.com'), null);
  assert.equal(handleOf({ userId: 7, username: 'alice' }), 'alice');
  assert.equal(handleOf({ userId: 7, username: 'Alice' }), 'u7');
  assert.equal(handleOf({ userId: 7, username: 'a--b' }), 'u7');
});
