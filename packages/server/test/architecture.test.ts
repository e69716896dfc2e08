// test-lane: light (ESLint on a few lines of text, and a folder listing)
/**
 * The server's floors hold: the ESLint rule built from `SERVER_FLOORS` (eslint.config.js) fails an import that runs
 * back up a floor and passes one that points down, and docs/ARCHITECTURE.md draws every folder of src/ that the
 * rule places. A new folder must be given a floor (here) and drawn (there) in the same change.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SRC = path.join(ROOT, 'packages/server/src');
// The floors as the lint rule has them (a JavaScript module: imported by URL, so the compiler does not look for types).
const { SERVER_FLOORS } = (await import(pathToFileURL(path.join(ROOT, 'eslint.config.js')).href)) as {
  SERVER_FLOORS: Record<string, { floor: string; never: string[] }>;
};

/** The floor-rule messages ESLint gives `code` as if it were the file `file` (a path under packages/server/src). */
async function floorProblems(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: ROOT });
  const [result] = await eslint.lintText(code, { filePath: path.join(SRC, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('the floors rule', () => {
  // A deliberate upward import in a file placed among each floor's own (linted as text: nothing is written).
  const upward: [file: string, code: string][] = [
    ['store/probe.ts', "import type { SessionService } from '../core/sessions.ts';\nexport type X = SessionService;\n"],
    ['store/migrations/probe.ts', "import { AppError } from '../../core/errors.ts';\nexport const x = AppError;\n"],
    ['model.ts', "import type { Config } from './config/index.ts';\nexport type X = Config;\n"],
    ['vm/qemu/probe.ts', "import { egressTableName } from '../../net/egress/ruleset.ts';\nexport const x = egressTableName;\n"],
    ['core/probe.ts', "import { API_DOCS } from '../api/openapi.ts';\nexport const x = API_DOCS;\n"],
    ['core/cluster/probe.ts', "import { runEgress } from '../../net/egress/egress-enforcer.ts';\nexport const x = runEgress;\n"],
    ['browser/probe.ts', "import { createEngine } from '../engine/index.ts';\nexport const x = createEngine;\n"],
    ['config/probe.ts', "import type { Services } from '../services.ts';\nexport type X = Services;\n"],
    ['services.ts', "import { buildApp } from './app.ts';\nexport const x = buildApp;\n"],
    ['api/routes/sessions/probe.ts', "import { findSession } from '../../../store/sessions-store.ts';\nexport const x = findSession;\n"],
    // The transport between nodes is an adapter: the core reaches it through its ports, the public routes not at all.
    ['core/vms/probe.ts', "import { HttpRemoteNodes } from '../../cluster/http-remote-nodes.ts';\nexport const x = HttpRemoteNodes;\n"],
    ['api/routes/vms/probe.ts', "import { AGENT_RPC_PATH } from '../../../cluster/agent-rpc-messages.ts';\nexport const x = AGENT_RPC_PATH;\n"],
    ['api/internal/probe.ts', "import { findVm } from '../../store/vms-store.ts';\nexport const x = findVm;\n"],
  ];
  for (const [file, code] of upward) {
    test(`fails an upward import from src/${file}`, async () => {
      const problems = await floorProblems(file, code);
      assert.equal(problems.length, 1, `expected the floors rule to fail it, got ${JSON.stringify(problems)}`);
      assert.match(problems[0]!, /floor of the server: it never imports/);
    });
  }

  const downward: [file: string, code: string][] = [
    ['store/probe.ts', "import type { Session } from '../model.ts';\nexport type X = Session;\n"],
    ['core/cluster/probe.ts', "import type { BrowserApi } from '../browser/browser-api.ts';\nexport type X = BrowserApi;\n"],
    ['engine/probe.ts', "import { classifierOf } from '../net/egress/cgroup-classifier.ts';\nexport const x = classifierOf;\n"],
    ['api/routes/sessions/probe.ts', "import type { SessionService } from '../../../core/sessions.ts';\nexport type X = SessionService;\n"],
    ['config/probe.ts', "import { DEFAULT_PLANS } from '../core/plans.ts';\nexport const x = DEFAULT_PLANS;\n"],
    // The internal listener serves the receiving half of the cluster transport (FLOOR_EXCEPTIONS).
    ['api/internal/probe.ts', "import { serveAgentRpc } from '../../cluster/agent-rpc-server.ts';\nexport const x = serveAgentRpc;\n"],
    ['cluster/probe.ts', "import type { RemoteNodes } from '../core/cluster/remote-nodes.ts';\nexport type X = RemoteNodes;\n"],
  ];
  for (const [file, code] of downward) {
    test(`passes a downward import from src/${file}`, async () => {
      assert.deepEqual(await floorProblems(file, code), []);
    });
  }
});

describe('every folder of the server is placed and drawn', () => {
  const places = fs
    .readdirSync(SRC, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || entry.name.endsWith('.ts'))
    .map((entry) => entry.name)
    .sort();

  test('each folder and top-level file of packages/server/src has a floor in eslint.config.js', () => {
    assert.deepEqual(
      places.filter((place) => !(place in SERVER_FLOORS)),
      [],
    );
    assert.deepEqual(
      Object.keys(SERVER_FLOORS).filter((place) => !places.includes(place)),
      [],
      'a floor for a place that is gone',
    );
  });

  test('docs/ARCHITECTURE.md draws every folder of packages/server/src', () => {
    const doc = fs.readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Dependencies point one way'), doc.indexOf('\n## ', doc.indexOf('## Dependencies point one way') + 1));
    const folders = places.filter((place) => !place.endsWith('.ts'));
    assert.deepEqual(
      folders.filter((folder) => !section.includes(`${folder}/`)),
      [],
      'folders missing from "Dependencies point one way"',
    );
    assert.deepEqual(
      places.filter((place) => place.endsWith('.ts') && !section.includes(place)),
      [],
      'top-level files missing from it',
    );
  });
});
