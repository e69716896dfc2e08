#!/usr/bin/env node
// Entry point of the `sandbox` command: the compiled command in ../dist (plain JavaScript, no tsx). The package
// is published with dist/ built; in the repository, the set-up builds it (scripts/build-sdk.mjs, also
// `npm run build -w @sandboxd/cli`). bin/sandbox-dev.mjs runs the TypeScript sources instead.
import fs from 'node:fs';

const main = new URL('../dist/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  process.stderr.write(
    'sandbox: the command is not built (no dist/main.js); in the sandboxd repository run `node scripts/build-sdk.mjs` (or the set-up, `node scripts/setup.mjs`)\n',
  );
  process.exit(1);
}
await import(main.href);
