/**
 * The `sandbox` command bundled into one JavaScript file for the tests that run it many times. The checkout's
 * entry point (`bin/sandbox.mjs`) compiles the TypeScript sources through tsx at every start: ~0.6 s of CPU per
 * run, hundreds of runs in `npm test`, on a 2-core machine whose other core runs a VM. The bundle starts in
 * ~0.2 s. It is built from the same sources (the CLI, and the SDK and MCP server through their
 * `@sandboxd/source` export condition, as the entry point resolves them) with esbuild (already here, tsx's
 * compiler); npm packages stay imports, resolved from the repository's node_modules as the entry point's are.
 * Built once per content of those sources (the file name carries their hash), so concurrent test files share it;
 * a test that must run the real entry point uses `BIN` (run-cli.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const packagesDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The workspace packages the command is made of (bundled from their sources; everything else stays an import). */
const SOURCE_PACKAGES = ['cli', 'sdk', 'mcp'];
const OUT_DIR = path.join(packagesDir, 'cli', '.test-build');

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : [full];
  });
}

/** A hash of every source file (and package.json) of the packages bundled: a change to any of them builds anew. */
function sourceHash(): string {
  const hash = crypto.createHash('sha256');
  for (const name of SOURCE_PACKAGES) {
    const root = path.join(packagesDir, name);
    for (const file of [path.join(root, 'package.json'), ...sourceFiles(path.join(root, 'src')).sort()]) {
      hash.update(path.relative(packagesDir, file)).update('\0').update(fs.readFileSync(file)).update('\0');
    }
  }
  return hash.digest('hex').slice(0, 16);
}

/** The bundle's path, built first when these sources have none yet. */
export async function cliBundle(): Promise<string> {
  const out = path.join(OUT_DIR, `sandbox-${sourceHash()}.mjs`);
  if (fs.existsSync(out)) return out;
  const result = await build({
    entryPoints: [path.join(packagesDir, 'cli', 'src', 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['@sandboxd/source'],
    write: false,
    logLevel: 'warning',
    plugins: [
      {
        name: 'npm-packages-stay-imports',
        setup(builder) {
          // A bare specifier that is not one of ours (node:…, commander, ws, …) is left for Node to resolve.
          builder.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@sandboxd/') ? undefined : { path: args.path, external: true }));
        },
      },
    ],
  });
  fs.mkdirSync(OUT_DIR, { recursive: true });
  // Written beside and renamed: a test file starting at the same moment reads a whole bundle or builds its own.
  const partial = `${out}.${process.pid}.partial`;
  fs.writeFileSync(partial, result.outputFiles[0]!.contents);
  fs.renameSync(partial, out);
  // Bundles of sources long changed go (a day old: a run of the suite still using one is long over).
  for (const name of fs.readdirSync(OUT_DIR)) {
    const file = path.join(OUT_DIR, name);
    if (file !== out && Date.now() - fs.statSync(file).mtimeMs > 86_400_000) fs.rmSync(file, { force: true });
  }
  return out;
}
