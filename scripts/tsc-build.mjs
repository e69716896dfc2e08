// Compiles one package's TypeScript to JavaScript with tsc when its inputs changed since the last build, compared
// by content hash (a stamp under node_modules/, so nothing of it is packed or installed). Used by the build scripts
// (build-sdk.mjs: the client packages; build-server.mjs: the server) that scripts/setup.mjs and `npm run build` run.
//
// The server's compile is `tsc --noCheck` (`check: false`): emit only, ~10 s for its ~600 files instead of a
// minute, since `npm run typecheck` (in `npm test` and CI) checks the types of every package at once. The published
// client packages are checked as they compile. Plain JavaScript with no dependencies beyond TypeScript, like
// setup.mjs.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Every file under `dir`, sorted (a stable order for hashing). */
export function filesUnder(dir) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => (entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)]))
    .sort();
}

/**
 * The hash of every input: the files under `sourceDirs`, the `files` given, the base tsconfig, the compiler's
 * version, and `extra` (e.g. the hashes of the packages a build reads the dist/ of).
 */
export function inputsHash({ sourceDirs, files, extra = '' }) {
  const inputs = [
    ...sourceDirs.flatMap((dir) => filesUnder(dir)),
    ...files,
    path.join(root, 'tsconfig.base.json'),
    path.join(root, 'node_modules', 'typescript', 'package.json'),
  ];
  return filesHash(inputs, extra);
}

/** SHA-256 over each file's path (from the repository's root) and content, in the order given, after `extra`. */
export function filesHash(files, extra = '') {
  const hash = createHash('sha256').update(extra).update('\0');
  for (const file of files) hash.update(path.relative(root, file)).update('\0').update(fs.readFileSync(file)).update('\0');
  return hash.digest('hex');
}

/**
 * Runs `tsc -p <tsconfig>` into `outDir` unless the stamp says these very inputs were built; answers whether it
 * built. `label` names the build in the progress lines `step` prints. `check: false` compiles without checking
 * types (see the header).
 */
export function ensureCompiled({ label, tsconfig, outDir, sourceDirs, files = [], extra = '', stampName, check = true, step }) {
  const stamp = path.join(root, 'node_modules', `.sandboxd-${stampName}-hash`);
  const hash = inputsHash({ sourceDirs, files: [tsconfig, ...files], extra });
  const shown = path.relative(root, outDir);
  if (fs.existsSync(outDir) && fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === hash) {
    step(`${label}: ${shown}/ up to date`);
    return false;
  }
  step(`${label}: compiling to ${shown}/ (tsc, a few seconds)`);
  // A clean build into a folder of its own, then swapped in: files of deleted sources do not linger in what
  // `import` and `npm pack` see, and a process loading the output meanwhile (a test, the server) never sees half
  // a build.
  const building = `${outDir}.building-${process.pid}`;
  fs.rmSync(building, { recursive: true, force: true });
  const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const args = [tsc, '-p', tsconfig, '--outDir', building, ...(check ? [] : ['--noCheck'])];
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    fs.rmSync(building, { recursive: true, force: true });
    throw new Error(`compiling ${label} failed (tsc exited with ${result.status ?? result.signal})`);
  }
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.renameSync(building, outDir);
  fs.writeFileSync(stamp, hash);
  step(`${label}: compiled`);
  return true;
}

/** Runs `main` when this module is the script node was started with, printing a failure as `[name] message`. */
export function runAsScript(moduleUrl, name, main) {
  if (!process.argv[1] || path.resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  try {
    main();
  } catch (error) {
    process.stderr.write(`[${name}] ${error.message}\n`);
    process.exit(1);
  }
}
