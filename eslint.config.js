// ESLint flat config: typescript-eslint's recommended rules over every package.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The floors of the server (packages/server/src), lowest first. A place imports its own floor and the floors below,
// never one above, so the arrows of the house point down; `import type` counts too. The same list is drawn in
// docs/ARCHITECTURE.md ("Dependencies point one way"), and packages/server/test/architecture.test.ts shows the rule
// failing an upward import and checks that every folder of src/ is placed here and drawn there.
//
//   1 ground    model.ts activity.ts version.ts logger.ts       the domain vocabulary and records, the API version,
//               host/ contract/                                logger options, host helpers (run a program, firewall
//                                                              marks, forbidden addresses, listen addresses), the
//                                                              wire schemas
//   2 adapters  store/ storage/ agent/ vm/ image/ dns/ webhooks/   what the core uses; they know nothing of it
//               observability/                                 (the metrics registry, the tracing SDK and span helper)
//   3 core      core/                                          decides; declares the ports its adapters implement
//   4 ports     engine/ net/ browser/ git/ ssh/ cluster/       implement core's ports (or serve it: ssh); not each
//                                                              other, except engine, which uses net's cgroup classifier;
//                                                              cluster/ is the transport between nodes, whose receiving
//                                                              half only the internal listener (api/internal*) serves
//   5 config    config/                                        composes the settings, one block per area
//   6 services  services.ts                                    wires the core over a store and its adapters
//   7 api       api/                                           turns HTTP into core calls: never an adapter directly
//   8 top       app.ts app-workers.ts main.ts cli/             build the app and its workers, run it, the admin command
const GROUND = ['model.ts', 'activity.ts', 'version.ts', 'logger.ts', 'host', 'contract'];
const ADAPTERS = ['store', 'storage', 'agent', 'vm', 'image', 'dns', 'webhooks', 'observability'];
const PORTS = ['engine', 'net', 'browser', 'git', 'ssh', 'cluster'];
const ABOVE_PORTS = ['config', 'services.ts', 'api', 'app.ts', 'app-workers.ts', 'main.ts', 'cli'];
const TOP = ['app.ts', 'app-workers.ts', 'main.ts', 'cli'];

/** Each place of packages/server/src with what it may never import (a folder, or a top-level `.ts` file). */
export const SERVER_FLOORS = {
  ...Object.fromEntries(GROUND.map((place) => [place, { floor: 'ground', never: [...ADAPTERS, 'core', ...PORTS, ...ABOVE_PORTS] }])),
  ...Object.fromEntries(ADAPTERS.map((place) => [place, { floor: 'adapters', never: ['core', ...PORTS, ...ABOVE_PORTS] }])),
  // The core reaches the guest, the network and the outside through its ports, never through their adapters.
  core: { floor: 'core', never: ['agent', 'vm', 'dns', 'webhooks', ...PORTS, ...ABOVE_PORTS] },
  ...Object.fromEntries(
    PORTS.map((place) => [place, { floor: 'ports', never: [...PORTS.filter((p) => p !== place && !(place === 'engine' && p === 'net')), ...ABOVE_PORTS] }]),
  ),
  config: { floor: 'config', never: ['services.ts', 'api', ...TOP] },
  'services.ts': { floor: 'services', never: ['api', ...TOP] },
  api: { floor: 'api', never: [...ADAPTERS, 'engine', 'net', 'browser', 'git', 'cluster', ...TOP] },
  ...Object.fromEntries(TOP.map((place) => [place, { floor: 'top', never: [] }])),
};

/** The import specifiers that reach one of `places` from a file `depth` folders below src/ (relative imports only). */
function specifierPattern(depth, places) {
  const up = depth === 0 ? '\\./' : `(?:\\.\\./){${depth}}`;
  const folders = places.filter((place) => !place.endsWith('.ts'));
  const files = places.filter((place) => place.endsWith('.ts')).map((file) => file.slice(0, -'.ts'.length));
  const alternatives = [...(folders.length ? [`(?:${folders.join('|')})/`] : []), ...(files.length ? [`(?:${files.join('|')})\\.ts$`] : [])];
  return `^${up}(?:${alternatives.join('|')})`;
}

/** The rule block for the files `files`, `depth` folders below src/, of a place on `floor` that never imports `never`. */
function floorRule(place, floor, never, depth, files) {
  return {
    files,
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: specifierPattern(depth, never),
              message: `${place} is on the ${floor} floor of the server: it never imports ${never.join(', ')} (floors: eslint.config.js, docs/ARCHITECTURE.md).`,
            },
          ],
        },
      ],
    },
  };
}

/** One no-restricted-imports block per place and folder depth: a relative specifier names its target exactly. */
function floorRules() {
  return Object.entries(SERVER_FLOORS)
    .filter(([, { never }]) => never.length > 0)
    .flatMap(([place, { floor, never }]) =>
      (place.endsWith('.ts') ? [0] : [1, 2, 3, 4]).map((depth) =>
        floorRule(place, floor, never, depth, [
          place.endsWith('.ts') ? `packages/server/src/${place}` : `packages/server/src/${place}/${'*/'.repeat(depth - 1)}*.ts`,
        ]),
      ),
    );
}

/**
 * Files that may import one place more than their floor does, each with why. Later blocks win in a flat config, so
 * these come after the floor rules and repeat the rest of the floor's list.
 */
export const FLOOR_EXCEPTIONS = [
  // The internal listener serves the receiving half of the transport between nodes (the agent RPC's server);
  // the rest of api reaches the other nodes only through the core.
  { place: 'api', files: { 1: ['api/internal-listener.ts'], 2: ['api/internal/*.ts'], 3: ['api/internal/*/*.ts'] }, allowed: ['cluster'] },
];

function floorExceptionRules() {
  return FLOOR_EXCEPTIONS.flatMap(({ place, files, allowed }) => {
    const { floor, never } = SERVER_FLOORS[place];
    const rest = never.filter((other) => !allowed.includes(other));
    return Object.entries(files).map(([depth, globs]) =>
      floorRule(
        place,
        floor,
        rest,
        Number(depth),
        globs.map((glob) => `packages/server/src/${glob}`),
      ),
    );
  });
}

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.sandboxd/**', '**/*.d.ts', '**/.test-build/**', 'packages/server/src/api/e2b/envd/gen/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Clones of one snapshot share the agent's memory, so a generator seeded in it hands every clone the same
    // values: the agent draws from the kernel instead (packages/agent/src/system/kernel-random.ts).
    files: ['packages/agent/src/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'Math', property: 'random', message: "Use kernelRandomBytes (system/kernel-random.ts): clones share Math.random's state." },
      ],
      'no-restricted-globals': [
        'error',
        { name: 'crypto', message: "Use kernelRandomBytes (system/kernel-random.ts): clones share OpenSSL's generator state." },
      ],
      'no-restricted-imports': [
        'error',
        ...['node:crypto', 'crypto'].map((name) => ({
          name,
          importNames: ['randomBytes', 'randomUUID', 'randomInt', 'randomFill', 'randomFillSync', 'getRandomValues', 'webcrypto'],
          message: "Use kernelRandomBytes (system/kernel-random.ts): clones share OpenSSL's generator state.",
        })),
      ],
    },
  },
  ...floorRules(),
  ...floorExceptionRules(),
  {
    // Tests read untyped JSON responses; typing every body would add noise, not safety.
    files: ['**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
