#!/usr/bin/env node
// The `sandbox` command from its TypeScript sources, for development in the repository (not published): runs
// them through tsx, and resolves @sandboxd/sdk and @sandboxd/mcp to their sources (the "@sandboxd/source" export
// condition), so a change shows without a build. bin/sandbox.mjs, what users get, runs the compiled dist/.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

register('./source-condition.mjs', import.meta.url);
registerTsx();
await import('../src/main.ts');
