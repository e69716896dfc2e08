#!/usr/bin/env node
// Compiles the server to JavaScript: packages/server/dist/ (what `npm start`, the `sandboxd` command and the Debian
// package run), and first the agent's protocol module it imports (packages/agent/dist/protocol/, what
// `@sandboxd/agent/protocol` resolves to outside the TypeScript sources). Each only when its sources changed.
// Run by scripts/setup.mjs and `npm run build`; runnable alone: node scripts/build-server.mjs
//
// dist/ mirrors src/ at the same depth, so the paths the server finds beside its code (`new URL('../../images/',
// import.meta.url)`, the agent bundle, the console's build) resolve the same from either.
import path from 'node:path';
import { ensureCompiled, root, runAsScript } from './tsc-build.mjs';

const agent = path.join(root, 'packages', 'agent');
const server = path.join(root, 'packages', 'server');

export function ensureServerCompiled(step = (message) => process.stderr.write(`${message}\n`)) {
  ensureCompiled({
    label: 'agent protocol (@sandboxd/agent/protocol)',
    tsconfig: path.join(agent, 'tsconfig.protocol.json'),
    outDir: path.join(agent, 'dist', 'protocol'),
    sourceDirs: [path.join(agent, 'src', 'protocol')],
    files: [path.join(agent, 'package.json')],
    stampName: 'agent-protocol',
    check: false,
    step,
  });
  ensureCompiled({
    label: 'server (@sandboxd/server)',
    tsconfig: path.join(server, 'tsconfig.build.json'),
    outDir: path.join(server, 'dist'),
    sourceDirs: [path.join(server, 'src')],
    files: [path.join(server, 'package.json')],
    stampName: 'server',
    check: false,
    step,
  });
}

runAsScript(import.meta.url, 'build-server', () => ensureServerCompiled());
