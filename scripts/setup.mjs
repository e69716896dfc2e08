#!/usr/bin/env node
// Set-up shared by `npm start` and `npm test`: installs what is missing on a fresh Debian machine, then
// returns. Plain JavaScript with no dependencies, because it runs before `npm install` has.
//
//   node scripts/setup.mjs --for=start   npm deps, every package compiled (`npm run build`, scripts/build.mjs: only what
//                                        changed), Debian packages for VMs, the default guest image, `sandbox` on PATH
//   node scripts/setup.mjs --for=test    the same, plus the packages the tests use (PostgreSQL, Chromium, …) and the
//                                        browser, desktop and docker images
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAll } from './build.mjs';
import { ENGINE_PACKAGES } from './debian-packages.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const purpose = (process.argv.find((a) => a.startsWith('--for=')) ?? '--for=start').slice('--for='.length);
const started = Date.now();

/**
 * Extra packages for the test suite: PostgreSQL (the store's contract tests), pyflakes3 and black, which
 * `npm run lint` runs over the Python the agent runs in the guest, and a container registry with `htpasswd`
 * (the OCI image tests run their own on loopback, with and without basic authentication), Chromium (the
 * browser and desktop viewer tests open pages in it) and ffmpeg (ffprobe reads desktop recordings).
 */
// The Python client's tests build a wheel and install it into venvs with the system Python (no PyPI).
// The egress tests make a test CA with openssl and fetch through the host firewall with curl.
const TEST_PACKAGES = [
  'postgresql',
  'pyflakes3',
  'black',
  'docker-registry',
  'apache2-utils',
  'chromium',
  'ffmpeg',
  'python3-pip',
  'python3-venv',
  'python3-wheel',
  // The Python client's sdist (`python3 -m build --sdist --no-isolation`, packages-install test of the client).
  'python3-build',
  // The Python client's dependencies (its test venvs take them from the system, offline) and its type check.
  'python3-httpx',
  'python3-websockets',
  'mypy',
  'openssl',
  'curl',
  'openssh-client',
];

function step(message) {
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  process.stderr.write(`[setup +${seconds}s] ${message}\n`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: 'inherit', cwd: root, ...options });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
}

function checkNode() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) throw new Error(`Node.js 20 or newer is required (this is ${process.version})`);
}

/**
 * npm dependencies, when node_modules is missing or older than package-lock.json (compared by content
 * hash): `npm ci` on a fresh tree; an incremental `npm install` when node_modules exists, which is faster
 * and does not pull the tree from under processes that are using it.
 */
function ensureNpmDependencies() {
  const lock = path.join(root, 'package-lock.json');
  const stamp = path.join(root, 'node_modules', '.sandboxd-deps-hash');
  const hash = createHash('sha256').update(fs.readFileSync(lock)).digest('hex');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === hash) {
    step('npm dependencies: up to date');
    return;
  }
  const fresh = !fs.existsSync(path.join(root, 'node_modules'));
  step(
    `npm dependencies: installing (${fresh ? "npm ci: ~30 s, 1-2 min on a machine's first install, which compiles better-sqlite3 from source" : 'npm install, incremental'})`,
  );
  // --prefer-offline: the lock file names every version and checksum, so what the npm cache holds is what the
  // registry would send; only what it lacks is fetched.
  run('npm', [fresh ? 'ci' : 'install', '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']);
  fs.writeFileSync(stamp, hash);
  step('npm dependencies: installed');
  keepNativeBuild('better-sqlite3', 'build/Release/better_sqlite3.node');
}

/**
 * better-sqlite3's install script asks GitHub for a prebuilt binary, which this kind of machine cannot reach, and
 * then compiles SQLite from source (~75 s of CPU on 2 cores). The binary it compiled is kept where that script
 * looks before it asks GitHub (prebuild-install's cache in the npm cache, under the name of the download it
 * would have made: this package version, this Node ABI, platform and architecture), so the next install on
 * this machine — a fresh clone's `npm ci` — unpacks it instead of compiling again. Nothing is kept when the
 * file is there already or the package has no such binary; a failure here only costs the next install its
 * compile.
 */
function keepNativeBuild(name, binary) {
  try {
    const moduleDir = path.join(root, 'node_modules', name);
    const util = createRequire(import.meta.url)(path.join(root, 'node_modules', 'prebuild-install', 'util.js'));
    const pkg = JSON.parse(fs.readFileSync(path.join(moduleDir, 'package.json'), 'utf8'));
    const url = util.getDownloadUrl({
      pkg,
      runtime: 'node',
      abi: process.versions.modules,
      platform: process.platform,
      arch: process.arch,
      libc: '',
      'tag-prefix': 'v',
    });
    const cached = util.cachedPrebuild(url);
    if (fs.existsSync(cached) || !fs.existsSync(path.join(moduleDir, binary))) return;
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    const partial = `${cached}.${process.pid}.partial`;
    run('tar', ['-czf', partial, '-C', moduleDir, binary]);
    fs.renameSync(partial, cached);
    step(`npm dependencies: ${name}'s compiled binary kept for the next install (${cached})`);
  } catch (error) {
    step(`npm dependencies: ${name}'s compiled binary not kept (${error.message}); the next install compiles it again`);
  }
}

function isInstalled(pkg) {
  const result = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return result.status === 0 && result.stdout.includes('install ok installed');
}

function ensureDebianPackages(packages) {
  const missing = packages.filter((p) => !isInstalled(p));
  if (missing.length === 0) {
    step(`Debian packages: all ${packages.length} present`);
    return;
  }
  if (process.getuid?.() !== 0) {
    throw new Error(`missing Debian packages: ${missing.join(' ')}; run as root, or install them with: sudo apt-get install ${missing.join(' ')}`);
  }
  step(`Debian packages: installing ${missing.join(' ')} (apt-get; a few minutes on a fresh machine)`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  run('apt-get', ['update', '-q'], { env });
  run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...missing], { env });
  step('Debian packages: installed');
}

/**
 * The guest image, cached by content hash in SANDBOXD_CACHE_DIR (default ~/.cache/sandboxd): built once per
 * machine (about a minute: mmdebstrap), then found in well under a second.
 */
function ensureGuestImage() {
  step('guest image: checking the cache (a first build runs mmdebstrap with the Python data-analysis packages: about three minutes)');
  const args = ['packages/server/dist/image/cli.js', 'ensure', '--agent', 'packages/agent/dist/agent.mjs'];
  if (process.env.SANDBOXD_CACHE_DIR) args.push('--cache-dir', process.env.SANDBOXD_CACHE_DIR);
  run(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  step('guest image: ready');
  if (purpose !== 'test') {
    // Serving sooner: many users never open a browser or a desktop, and their images took 4.3 of the 9.1 minutes
    // a first `npm start` spent before serving. The server builds each on its first use (the session waits for it;
    // progress in the server's log). The tests use all three, so `--for=test` builds them here, once per machine.
    step('browser, desktop and docker images: built by the server on first use (a first build: about 1.5, 3 and 1.2 minutes)');
    return;
  }
  // The browser template's image: the same layers plus Debian's chromium and fonts (a first build: ~1.5 min).
  step('browser image: checking the cache (a first build adds chromium to a base of its own, about a minute and a half)');
  run(process.execPath, [...args, '--flavour', 'browser'], { stdio: ['ignore', 'ignore', 'inherit'] });
  step('browser image: ready');
  // The desktop template's image: Xvnc, openbox, xterm, Chromium, xdotool, ffmpeg, noVNC (a first build: ~3 min).
  step('desktop image: checking the cache (a first build adds an X desktop, Chromium and ffmpeg to a base of its own, about three minutes)');
  run(process.execPath, [...args, '--flavour', 'desktop'], { stdio: ['ignore', 'ignore', 'inherit'] });
  step('desktop image: ready');
  // The docker template's image: docker.io, containerd, runc, iptables, docker-compose, busybox (a first build: ~1.2 min).
  step('docker image: checking the cache (a first build adds Docker and compose v1 to a base of its own, about a minute)');
  run(process.execPath, [...args, '--flavour', 'docker'], { stdio: ['ignore', 'ignore', 'inherit'] });
  step('docker image: ready');
}

/** Where npm puts global commands (`npm prefix -g`/bin), or null when npm cannot say. */
function globalBinDir() {
  const result = spawnSync('npm', ['prefix', '-g'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const prefix = result.status === 0 ? result.stdout.trim() : '';
  return prefix ? path.join(prefix, 'bin') : null;
}

/**
 * The `sandbox` command on PATH: a symlink in npm's global bin directory to this clone's CLI entry point,
 * like `npm link -w @sandboxd/cli` makes, without re-running an install. A link left by another sandboxd clone
 * is pointed here (the newest set-up wins); any other program called `sandbox` is left alone.
 */
function installCommandLine() {
  const target = path.join(root, 'packages', 'cli', 'bin', 'sandbox.mjs');
  const binDir = globalBinDir();
  const manual = `run it as npx sandbox, or link it yourself: ln -s ${target} <a directory on PATH>/sandbox`;
  if (!binDir) {
    step(`sandbox command: npm has no global prefix; ${manual}`);
    return;
  }
  const link = path.join(binDir, 'sandbox');
  let current = null;
  try {
    current = fs.readlinkSync(link);
  } catch (error) {
    if (error.code === 'EINVAL') {
      step(`sandbox command: ${link} is another program; left alone (${manual})`);
      return;
    }
    if (error.code !== 'ENOENT') throw error;
  }
  const resolved = current === null ? null : path.resolve(binDir, current);
  if (resolved === target) {
    step(`sandbox command: ${link}`);
    return;
  }
  if (resolved !== null && !resolved.endsWith(path.join('packages', 'cli', 'bin', 'sandbox.mjs'))) {
    step(`sandbox command: ${link} links to ${resolved}, not a sandboxd clone; left alone (${manual})`);
    return;
  }
  try {
    fs.mkdirSync(binDir, { recursive: true });
    const temporary = `${link}.sandboxd-${process.pid}`;
    fs.symlinkSync(target, temporary);
    fs.renameSync(temporary, link); // atomic: a concurrent `sandbox` call sees the old link or the new one
    step(`sandbox command: installed as ${link} -> ${target}`);
  } catch (error) {
    step(`sandbox command: cannot write ${binDir} (${error.code ?? error.message}); ${manual}`);
  }
}

try {
  checkNode();
  ensureNpmDependencies();
  buildAll(step);
  ensureDebianPackages(purpose === 'test' ? [...ENGINE_PACKAGES, ...TEST_PACKAGES] : ENGINE_PACKAGES);
  ensureGuestImage();
  installCommandLine();
  step(`ready (${purpose})`);
} catch (error) {
  process.stderr.write(`[setup] failed: ${error.message}\n`);
  process.exit(1);
}
