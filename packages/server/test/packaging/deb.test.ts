// test-lane: heavy (a Debian root made with mmdebstrap, apt, and the installed server running a VM)
/**
 * The Debian package as an operator gets it: built by `npm run release` (scripts/release.mjs, with the other
 * artifacts and their checksums), installed with apt into a fresh Debian root made with mmdebstrap (its
 * dependencies from Debian's mirror), its unit checked with `systemd-analyze verify`, its server started in that root exactly as the unit's ExecStart,
 * EnvironmentFile and WorkingDirectory say, and a session run through it on a real VM. The host's guest image
 * cache is bound into the root so the image is not built a second time (the cache is keyed by content: the root's
 * Debian kernel and agent give the same keys).
 */
import assert from 'node:assert/strict';
import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../src/config/index.ts';
import { freePort } from '../helpers/ports.ts';
import { DebianRoot } from './debian-root.ts';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../..');
const log = (line: string) => process.stderr.write(`[deb test] ${line}\n`);

/** The unit's `Key=value` lines of its [Service] section. */
function serviceSettings(unit: string): Map<string, string> {
  const section = unit.split(/^\[Service\]$/m)[1]!.split(/^\[/m)[0]!;
  return new Map(
    section
      .split('\n')
      .filter((line) => /^[A-Za-z]+=/.test(line))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}

describe('the Debian package', { timeout: 20 * 60_000 }, () => {
  let root: DebianRoot;
  let deb: string;
  let server: ChildProcess | undefined;
  const version = JSON.parse(fs.readFileSync(path.join(REPO, 'packages/server/package.json'), 'utf8')).version as string;
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-deb-out-'));

  before(async () => {
    log('npm run release (scripts/release.mjs): the .deb and every other artifact');
    const released = spawnSync(process.execPath, ['scripts/release.mjs', '--out', outDir], {
      cwd: REPO,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    assert.equal(released.status, 0, 'release.mjs failed');
    deb = path.join(outDir, `sandboxd_${version}_amd64.deb`);
    root = await DebianRoot.create('bookworm', log);
  });

  after(async () => {
    const started = Date.now();
    if (server && server.exitCode === null) {
      const exited = new Promise((resolve) => server!.once('exit', resolve));
      server.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 60_000)))]);
      clearTimeout(timer); // a pending timer would keep the file alive for the rest of the minute
      if (server.exitCode === null) server.kill('SIGKILL');
      log(`the server stopped in ${Date.now() - started} ms`);
    }
    root?.remove();
    log(`the root unmounted and removed after ${Date.now() - started} ms`);
    fs.rmSync(outDir, { recursive: true, force: true });
  });

  test("is one of the release's artifacts, each with its checksum", () => {
    const artifacts = fs.readdirSync(outDir).sort();
    assert.deepEqual(artifacts, [
      'SHA256SUMS',
      'openapi.json',
      `sandboxd-${version}-py3-none-any.whl`,
      `sandboxd-${version}.tar.gz`,
      `sandboxd-cli-${version}.tgz`,
      `sandboxd-mcp-${version}.tgz`,
      `sandboxd-sdk-${version}.tgz`,
      `sandboxd_${version}_amd64.deb`,
    ]);
    const checked = spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: outDir, encoding: 'utf8' });
    assert.equal(checked.status, 0, checked.stdout + checked.stderr);
    assert.equal(checked.stdout.trim().split('\n').length, artifacts.length - 1);
  });

  test('holds compiled code only, and declares its dependencies', () => {
    const files = spawnSync('dpkg-deb', ['--contents', deb], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }).stdout;
    assert.match(files, /\.\/usr\/lib\/sandboxd\/packages\/server\/dist\/main\.js\n/);
    assert.match(files, /\.\/lib\/systemd\/system\/sandboxd\.service\n/);
    assert.match(files, /\.\/etc\/sandboxd\/sandboxd\.env\n/);
    assert.doesNotMatch(files, /packages\/[a-z]+\/src\//, 'no TypeScript sources');
    assert.doesNotMatch(files, /node_modules\/(tsx|typescript|eslint|vite)\//, 'no development dependencies');
    const control = spawnSync('dpkg-deb', ['--field', deb, 'Depends', 'Version'], { encoding: 'utf8' }).stdout;
    assert.match(control, /qemu-system-x86/);
    assert.match(control, new RegExp(`Version: ${version.replace(/\./g, '\\.')}`));
  });

  test('installs with apt into a fresh Debian root, with its unit verified', () => {
    log('apt-get install ./sandboxd.deb (and systemd, to verify the unit) in the root');
    const inside = root.copyIn(deb);
    // The host's downloaded packages (its own set-up installed QEMU, the kernel and the rest from the same mirror):
    // apt takes a package from there when its checksum matches and downloads only what is missing.
    if (fs.existsSync('/var/cache/apt/archives')) root.bind('/var/cache/apt/archives', '/var/cache/apt/archives');
    root.exec(['apt-get', 'update', '-q']);
    root.exec(['apt-get', 'install', '-y', '-q', '--no-install-recommends', inside, 'systemd'], { DEBIAN_FRONTEND: 'noninteractive' });
    const status = root.exec(['dpkg-query', '-W', '-f', '${Status} ${Version}', 'sandboxd']);
    assert.equal(status, `install ok installed ${version}`);
    // systemd-analyze exits non-zero on errors (a missing ExecStart program among them) and writes warnings (an
    // unknown key) to stderr: both must be clean.
    const verify = spawnSync('chroot', [root.dir, 'systemd-analyze', 'verify', '/lib/systemd/system/sandboxd.service'], { encoding: 'utf8' });
    assert.equal(verify.status, 0, verify.stderr);
    assert.equal(verify.stderr.trim(), '');
    assert.match(root.exec(['sandboxd', '--help']), /backup/);
    assert.equal(
      root
        .exec(['sandbox', '--version'])
        .trim()
        .replace(/^sandbox\s+/, ''),
      version,
    );
  });

  test("its server, started as the unit's ExecStart, serves a session on a real VM", async () => {
    const settings = serviceSettings(root.read('/lib/systemd/system/sandboxd.service'));
    const execStart = settings.get('ExecStart')!;
    const environmentFile = settings.get('EnvironmentFile')!;
    const workingDirectory = settings.get('WorkingDirectory')!;
    assert.match(execStart, /^\/usr\/lib\/sandboxd\/node /);
    const env = Object.fromEntries(
      root
        .read(environmentFile)
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    // The guest images this machine has: the root's server finds the same image by its key instead of building it.
    root.bind(loadConfig({ ...process.env, SANDBOXD_DATA_DIR: os.tmpdir() }).vm.cacheDir, env.SANDBOXD_CACHE_DIR!);
    // systemd makes these (StateDirectory=, CacheDirectory=); here the postinst did. Another port than 8080, and
    // ephemeral ports for the other listeners: a server of another test may hold the defaults.
    const port = await freePort();
    const overrides = {
      SANDBOXD_PORT: String(port),
      SANDBOXD_ADMIN_LISTEN: '127.0.0.1:0',
      SANDBOXD_INTERNAL_LISTEN: '127.0.0.1:0',
      SANDBOXD_SSH_LISTEN: '127.0.0.1:0',
    };
    const assignments = Object.entries({ ...env, ...overrides }).map(([k, v]) => `${k}=${v}`);
    server = root.spawn(['/usr/bin/env', '-C', workingDirectory, '-i', 'PATH=/usr/sbin:/usr/bin:/sbin:/bin', ...assignments, ...execStart.split(' ')]);
    let output = '';
    server.stdout!.on('data', (chunk) => (output += chunk));
    server.stderr!.on('data', (chunk) => (output += chunk));
    const baseUrl = `http://127.0.0.1:${port}`;
    for (const deadline = Date.now() + 60_000; !output.includes('sandboxd is serving'); await new Promise((r) => setTimeout(r, 100))) {
      assert.equal(server.exitCode, null, `the server exited:\n${output}`);
      assert.ok(Date.now() < deadline, `not serving after 60 s:\n${output}`);
    }
    const apiKey = root.read(path.posix.join(env.SANDBOXD_DATA_DIR!, 'admin-api-key')).trim();
    const call = async (url: string, body: unknown) => {
      const response = await fetch(`${baseUrl}${url}`, {
        method: 'POST',
        headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const session = await call('/v1/sessions/session', {});
    assert.equal(session.status, 200, JSON.stringify(session.body));
    log('first execute: the root builds its template snapshot, then runs it');
    const run = await call('/execute', { session_id: session.body.session_id, code: 'import platform; print("from the package", 6 * 7)' });
    assert.equal(run.status, 200, `${JSON.stringify(run.body)}\n${output.slice(-4000)}`);
    assert.equal(run.body.stdout, 'from the package 42\n');
    assert.equal((await fetch(`${baseUrl}/readyz`)).status, 200);
    const reference = await fetch(`${baseUrl}/docs/reference`);
    assert.equal(reference.status, 200, 'the API reference page ships in the package');
    assert.match(await reference.text(), /<title>[^<]*sandboxd/i);
  });
});
