#!/usr/bin/env node
// Builds the Debian package, sandboxd_<version>_amd64.deb, with Debian's own dpkg-deb:
//
//   node scripts/build-deb.mjs [--out DIR]   (default: release/); prints the .deb's path on stdout
//
// What it holds (the layout of the repository under /usr/lib/sandboxd, so the paths the server finds beside its
// code resolve as in a checkout):
//   /usr/lib/sandboxd/packages/{server,agent,sdk,mcp,cli,dashboard}   compiled code only (dist/, bin/, the image
//                                                                     recipes, openapi.json), no sources
//   /usr/lib/sandboxd/node_modules                                     the production dependencies, copied from
//                                                                     this checkout's install (`npm ls --omit=dev`):
//                                                                     better-sqlite3's native module as built here,
//                                                                     no download at package or install time
//   /usr/lib/sandboxd/node                                             the Node.js that runs it: this machine's
//                                                                     (Debian 12 carries Node.js 18; the server
//                                                                     needs 20), so the package needs no third-
//                                                                     party repository
//   /usr/bin/sandboxd, /usr/bin/sandbox                                the admin command and the CLI
//   /lib/systemd/system/sandboxd.service, /etc/sandboxd/sandboxd.env   the service and its settings (a conffile)
//   /usr/share/doc/sandboxd                                            copyright, README, configuration reference
// The guest images are not in it: the server builds them from Debian's packages at its first start (progress in
// the journal), as `npm start` does.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildAll } from './build.mjs';
import { ENGINE_PACKAGES } from './debian-packages.mjs';
import { root, runAsScript } from './tsc-build.mjs';

const LIB = 'usr/lib/sandboxd';
const packaging = path.join(root, 'packaging', 'debian');

/** The release's version: the server package's (every package carries the same one). */
export function releaseVersion() {
  return JSON.parse(fs.readFileSync(path.join(root, 'packages', 'server', 'package.json'), 'utf8')).version;
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}: ${result.stderr ?? ''}`);
  return result.stdout;
}

/** Copies `from` (a file or a directory) to `to`, leaving out any directory named in `skip`; symlinks kept as links. */
function copy(from, to, skip = []) {
  fs.cpSync(from, to, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !(fs.lstatSync(source).isDirectory() && skip.includes(path.basename(source)) && source !== from),
  });
}

/** Each workspace package's compiled parts, by package folder. */
const PACKAGE_PARTS = {
  server: ['package.json', 'LICENSE', 'bin', 'dist', 'images', 'openapi.json'],
  agent: ['package.json', 'LICENSE', 'dist'],
  sdk: ['package.json', 'LICENSE', 'README.md', 'dist'],
  mcp: ['package.json', 'LICENSE', 'README.md', 'dist'],
  cli: ['package.json', 'LICENSE', 'README.md', 'bin', 'dist'],
  dashboard: ['package.json', 'LICENSE', 'dist'],
};

/** The production dependencies of the server and the CLI, as installed in this checkout (folders under node_modules). */
function productionDependencies() {
  const listed = run('npm', ['ls', '--omit=dev', '--all', '--parseable', '-w', '@sandboxd/server', '-w', '@sandboxd/cli']);
  // Hoisted to the root's node_modules, or nested in a workspace's own (packages/server/node_modules/p-limit, when
  // another package needs another major version at the root); the workspace packages themselves are linked below.
  return [...new Set(listed.split('\n'))]
    .map((dir) => path.relative(root, dir))
    .filter((dir) => dir.includes('node_modules') && !dir.startsWith('..') && !/(^|\/)node_modules\/@sandboxd(\/|$)/.test(dir))
    .sort();
}

function writeFile(file, content, mode = 0o644) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content, { mode });
  fs.chmodSync(file, mode); // the umask must not decide a packaged file's mode
}

function control(version, installedKib) {
  // Node.js's own libraries (ldd of the bundled binary), then what the engine runs.
  const depends = ['libc6 (>= 2.28)', 'libstdc++6', 'libgcc-s1', ...ENGINE_PACKAGES].join(', ');
  return [
    'Package: sandboxd',
    `Version: ${version}`,
    'Architecture: amd64',
    'Maintainer: sandboxd developers <sandboxd@localhost>',
    `Installed-Size: ${installedKib}`,
    `Depends: ${depends}`,
    'Recommends: systemd',
    'Section: admin',
    'Priority: optional',
    'Homepage: https://github.com/sandboxd/sandboxd',
    'Description: self-hostable service that runs isolated microVM sandboxes',
    ' sandboxd runs short-lived, isolated QEMU microVMs ("sandboxes") for AI agents and',
    ' developers: sessions, code execution, files, terminals, previews, browsers and',
    ' desktops in the VM, webhooks, behind one HTTP API, a web console, a CLI and SDKs.',
    '',
  ].join('\n');
}

/** Builds the .deb into `outDir` and answers its path; `step` prints progress. */
export function buildDeb(outDir, step = (message) => process.stderr.write(`${message}\n`)) {
  if (process.arch !== 'x64') throw new Error(`the package is amd64: build it on x86-64 (this is ${process.arch})`);
  buildAll(step);
  const version = releaseVersion();
  const staging = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-deb-'));
  fs.chmodSync(staging, 0o755); // the archive's ./ entry: mkdtemp's 0700 would be the mode of / in its listing
  try {
    const lib = path.join(staging, LIB);
    step('Debian package: copying the compiled packages');
    for (const [name, parts] of Object.entries(PACKAGE_PARTS)) {
      for (const part of parts) {
        const from = path.join(root, 'packages', name, part);
        if (fs.existsSync(from)) copy(from, path.join(lib, 'packages', name, part));
      }
    }
    // The API reference page the server serves at /docs/reference (found at <lib>/docs/, as in a checkout).
    copy(path.join(root, 'docs', 'reference', 'api'), path.join(lib, 'docs', 'reference', 'api'));
    writeFile(path.join(lib, 'package.json'), `${JSON.stringify({ name: 'sandboxd', version, private: true, type: 'module' }, null, 2)}\n`);
    const dependencies = productionDependencies();
    step(`Debian package: copying ${dependencies.length} production dependencies`);
    for (const dir of dependencies) copy(path.join(root, dir), path.join(lib, dir), ['node_modules']);
    // The workspace packages, linked as npm links them in a checkout.
    for (const name of Object.keys(PACKAGE_PARTS)) {
      const link = path.join(lib, 'node_modules', '@sandboxd', name);
      fs.mkdirSync(path.dirname(link), { recursive: true });
      fs.symlinkSync(path.join('..', '..', 'packages', name), link);
    }
    fs.copyFileSync(process.execPath, path.join(lib, 'node'));
    fs.chmodSync(path.join(lib, 'node'), 0o755);

    const wrapper = (entry, settings = '') => `#!/bin/sh\n${settings}exec /${LIB}/node /${LIB}/${entry} "$@"\n`;
    // The admin command works on the service's store: it takes the service's settings, each unless already set.
    const serviceSettings = [
      "# The service's settings (/etc/sandboxd/sandboxd.env), each unless the caller set it already.",
      'if [ -r /etc/sandboxd/sandboxd.env ]; then',
      '  while IFS= read -r line; do',
      '    case "$line" in [A-Z]*=*) ;; *) continue ;; esac',
      '    key=${line%%=*}',
      '    case "$key" in *[!A-Z0-9_]*) continue ;; esac',
      '    eval "[ -n \\"\\${$key+set}\\" ]" || export "$line"',
      '  done < /etc/sandboxd/sandboxd.env',
      'fi',
      '',
    ].join('\n');
    writeFile(path.join(staging, 'usr/bin/sandboxd'), wrapper('packages/server/bin/sandboxd.mjs', serviceSettings), 0o755);
    writeFile(path.join(staging, 'usr/bin/sandbox'), wrapper('packages/cli/bin/sandbox.mjs'), 0o755);
    writeFile(path.join(staging, 'lib/systemd/system/sandboxd.service'), fs.readFileSync(path.join(packaging, 'sandboxd.service')));
    writeFile(path.join(staging, 'etc/sandboxd/sandboxd.env'), fs.readFileSync(path.join(packaging, 'sandboxd.env')), 0o640);
    const doc = path.join(staging, 'usr/share/doc/sandboxd');
    writeFile(path.join(doc, 'copyright'), debianCopyright());
    writeFile(path.join(doc, 'README.md'), fs.readFileSync(path.join(packaging, 'README.md')));
    for (const extra of ['CHANGELOG.md', 'docs/reference/configuration.md']) {
      if (fs.existsSync(path.join(root, extra))) writeFile(path.join(doc, path.basename(extra)), fs.readFileSync(path.join(root, extra)));
    }

    const debian = path.join(staging, 'DEBIAN');
    const installedKib = Number(run('du', ['-sk', '--apparent-size', staging]).split('\t')[0]);
    writeFile(path.join(debian, 'control'), control(version, installedKib));
    writeFile(path.join(debian, 'conffiles'), '/etc/sandboxd/sandboxd.env\n');
    for (const script of ['postinst', 'prerm', 'postrm']) writeFile(path.join(debian, script), fs.readFileSync(path.join(packaging, script)), 0o755);

    fs.mkdirSync(outDir, { recursive: true });
    const deb = path.join(outDir, `sandboxd_${version}_amd64.deb`);
    step(`Debian package: dpkg-deb --build (${Math.round(installedKib / 1024)} MiB installed; zstd)`);
    // zstd at its default level: dpkg ≥ 1.21.18 (Debian 12) reads it. zstd -19 made the package a quarter smaller
    // (48 MiB against 63, measured with tsx still in it) but the build took 4 min 25 s here instead of 32 s.
    run('dpkg-deb', ['--root-owner-group', '-Zzstd', '-z3', '--threads-max=0', '--build', staging, deb]);
    step(`Debian package: ${deb} (${(fs.statSync(deb).size / 1024 / 1024).toFixed(1)} MiB)`);
    return deb;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

/** debian/copyright in the machine-readable format: sandboxd's licence, and the bundled Node.js's. */
function debianCopyright() {
  return [
    'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    'Upstream-Name: sandboxd',
    '',
    'Files: *',
    'Copyright: sandboxd developers',
    'License: Apache-2.0',
    '',
    'Files: usr/lib/sandboxd/node',
    'Copyright: Node.js contributors and others (https://github.com/nodejs/node/blob/main/LICENSE)',
    'License: MIT and others',
    '',
    'Files: usr/lib/sandboxd/node_modules/*',
    'Copyright: their authors; each package carries its licence in its folder',
    'License: various (MIT, Apache-2.0, ISC, BSD)',
    '',
    'License: Apache-2.0',
    ' On Debian systems, the full text of the Apache License 2.0 is in /usr/share/common-licenses/Apache-2.0.',
    '',
  ].join('\n');
}

runAsScript(import.meta.url, 'build-deb', () => {
  const outIndex = process.argv.indexOf('--out');
  const outDir = path.resolve(outIndex > 0 ? process.argv[outIndex + 1] : path.join(root, 'release'));
  console.log(buildDeb(outDir));
});
