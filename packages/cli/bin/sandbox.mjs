#!/usr/bin/env node
// Entry point of the `sandbox` command. Runs the TypeScript sources through tsx, and resolves
// @sandboxd/sdk to its sources (the "@sandboxd/source" export condition), so the repository needs no build.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

register('./source-condition.mjs', import.meta.url);
registerTsx();
await import('../src/main.ts');
