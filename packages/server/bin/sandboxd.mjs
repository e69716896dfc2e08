#!/usr/bin/env node
// Entry point of the `sandboxd` command: the compiled server (dist/, built by `npm run build`, by npm start's
// set-up, and shipped in the Debian package). From a checkout, the sources run with
// `node --import tsx packages/server/src/cli/admin.ts`.
import fs from 'node:fs';

const admin = new URL('../dist/cli/admin.js', import.meta.url);
if (!fs.existsSync(admin)) {
  process.stderr.write('sandboxd: the server is not compiled (no dist/): run `npm run build` in the repository first\n');
  process.exit(1);
}
await import(admin.href);
