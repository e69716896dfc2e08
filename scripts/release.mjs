#!/usr/bin/env node
// `npm run release`: every artifact of this release in one folder, with their checksums:
//
//   release/<version>/sandboxd_<version>_amd64.deb     the server as a Debian package (scripts/build-deb.mjs)
//   release/<version>/sandboxd-sdk-<version>.tgz       @sandboxd/sdk, @sandboxd/mcp, @sandboxd/cli: npm pack of each,
//   release/<version>/sandboxd-mcp-<version>.tgz       ready for `npm publish <tarball>` or `npm install <tarball>`
//   release/<version>/sandboxd-cli-<version>.tgz
//   release/<version>/sandboxd-<version>-py3-none-any.whl, sandboxd-<version>.tar.gz   the Python client
//   release/<version>/openapi.json                     the HTTP API's description
//   release/<version>/SHA256SUMS                       `sha256sum -c SHA256SUMS` checks them all
//
//   node scripts/release.mjs [--out DIR]   (default: release/<version>); prints the folder on stdout
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildDeb, releaseVersion } from './build-deb.mjs';
import { root, runAsScript } from './tsc-build.mjs';

const started = Date.now();
const step = (message) => process.stderr.write(`[release +${((Date.now() - started) / 1000).toFixed(1)}s] ${message}\n`);

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], ...options });
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status ?? result.signal}`);
  return result.stdout;
}

function sha256(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

export function release(outDir) {
  const version = releaseVersion();
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(outDir, { recursive: true });
  step(`sandboxd ${version} into ${path.relative(process.cwd(), outDir) || outDir}`);
  buildDeb(outDir, step); // builds every package first (npm run build)
  for (const workspace of ['@sandboxd/sdk', '@sandboxd/mcp', '@sandboxd/cli']) {
    step(`npm pack ${workspace}`);
    run('npm', ['pack', '--silent', '-w', workspace, '--pack-destination', outDir]);
  }
  step("the Python client: sdist, and the wheel built from it (python3 -m build, offline: Debian's python3-build)");
  // From a copy: setuptools writes its egg-info beside the sources. Debian's Python: its python3-build and
  // setuptools are there without PyPI (a python3 earlier on PATH may lack them).
  const python = fs.existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
  const source = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-python-release-'));
  try {
    for (const name of ['pyproject.toml', 'README.md', 'LICENSE', 'src']) {
      fs.cpSync(path.join(root, 'clients', 'python', name), path.join(source, name), {
        recursive: true,
        filter: (file) => !/(__pycache__|\.egg-info|\.pyc)$/.test(file),
      });
    }
    run(python, ['-m', 'build', '--no-isolation', '--outdir', outDir, source], { stdio: ['ignore', 'ignore', 'inherit'] });
  } finally {
    fs.rmSync(source, { recursive: true, force: true });
  }
  fs.copyFileSync(path.join(root, 'packages', 'server', 'openapi.json'), path.join(outDir, 'openapi.json'));
  const artifacts = fs
    .readdirSync(outDir)
    .filter((name) => name !== 'SHA256SUMS')
    .sort();
  fs.writeFileSync(path.join(outDir, 'SHA256SUMS'), artifacts.map((name) => `${sha256(path.join(outDir, name))}  ${name}\n`).join(''));
  for (const name of artifacts) step(`  ${name} (${(fs.statSync(path.join(outDir, name)).size / 1024 / 1024).toFixed(1)} MiB)`);
  step('SHA256SUMS written');
  return outDir;
}

runAsScript(import.meta.url, 'release', () => {
  const outIndex = process.argv.indexOf('--out');
  const outDir = path.resolve(outIndex > 0 ? process.argv[outIndex + 1] : path.join(root, 'release', releaseVersion()));
  console.log(release(outDir));
});
