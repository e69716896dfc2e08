/**
 * The app manifest (`sandboxd.yaml`; `sandboxd.yml`, `instavm.yaml` and `instavm.yml` are read too): YAML parsed by
 * `yaml`, aliases of the hosted service's names resolved, then checked by one TypeBox schema, so a mistake is a
 * 400 naming the field. The validated manifest (snake_case, defaults applied) is what a deployment keeps and shows.
 */
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse as parseYaml, YAMLParseError } from 'yaml';
import { badRequest } from '../errors.ts';

/** The manifest's file names at the archive's root, in the order they are looked for. */
export const MANIFEST_NAMES = ['sandboxd.yaml', 'sandboxd.yml', 'instavm.yaml', 'instavm.yml'] as const;

/** Other names accepted for a field (the hosted service's, and obvious ones): alias → field. */
export const MANIFEST_ALIASES: Readonly<Record<string, string>> = {
  cmd: 'start',
  command: 'start',
  build: 'install',
  healthcheck: 'health_check',
  health: 'health_check',
  cpu: 'vcpus',
  cpus: 'vcpus',
  memory: 'memory_mb',
};

/** An app name: a DNS label of at most 40 characters, without `--` (which separates it from the owner in the host). */
export const APP_NAME_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$';

const HealthCheck = Type.Object(
  {
    path: Type.Optional(Type.String({ pattern: '^/', maxLength: 1024 })),
    interval_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
    timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 600 })),
    start_timeout_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 3600 })),
    failure_threshold: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);

const EnvValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);

/** The manifest as written (after aliases). */
const ManifestInput = Type.Object(
  {
    name: Type.Optional(Type.String({ pattern: APP_NAME_PATTERN })),
    kind: Type.Optional(Type.Union([Type.Literal('folder'), Type.Literal('snapshot')])),
    snapshot: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    template: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    health_check: Type.Optional(Type.Union([Type.String({ pattern: '^/', maxLength: 1024 }), HealthCheck])),
    install: Type.Optional(Type.String({ minLength: 1, maxLength: 16384 })),
    start: Type.String({ minLength: 1, maxLength: 16384 }),
    env: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), EnvValue)),
    secrets: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 20 })),
    egress: Type.Optional(
      Type.Object({ allow: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), { maxItems: 200 }) }, { additionalProperties: false }),
    ),
    vcpus: Type.Optional(Type.Integer({ minimum: 1, maximum: 16 })),
    memory_mb: Type.Optional(Type.Integer({ minimum: 128, maximum: 8192 })),
    replicas: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
    public: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

/** A validated manifest: every field present (defaults applied). */
export const AppManifest = Type.Object({
  name: Type.Union([Type.String(), Type.Null()]),
  kind: Type.Union([Type.Literal('folder'), Type.Literal('snapshot')]),
  snapshot: Type.Union([Type.String(), Type.Null()]),
  template: Type.String(),
  port: Type.Integer(),
  health_check: Type.Object({
    path: Type.String(),
    interval_seconds: Type.Integer(),
    timeout_seconds: Type.Integer(),
    start_timeout_seconds: Type.Integer(),
    failure_threshold: Type.Integer(),
  }),
  install: Type.Union([Type.String(), Type.Null()]),
  start: Type.String(),
  env: Type.Record(Type.String(), Type.String()),
  secrets: Type.Array(Type.String()),
  egress: Type.Union([Type.Object({ allow: Type.Array(Type.String()) }), Type.Null()]),
  vcpus: Type.Integer(),
  memory_mb: Type.Integer(),
  replicas: Type.Integer(),
  public: Type.Boolean(),
});
export type AppManifest = Static<typeof AppManifest>;

/** What the server falls back to for vCPUs and memory when the manifest names none. */
export interface ManifestDefaults {
  vcpus: number;
  memoryMb: number;
}

/** The field a schema error's path names, dotted (`health_check.path`, `env.FOO`). */
function fieldOf(instancePath: string, params: unknown): string {
  const parts = instancePath.split('/').filter(Boolean);
  const extra = (params as { additionalProperties?: string[]; requiredProperties?: string[] } | undefined) ?? {};
  const named = extra.additionalProperties?.[0] ?? extra.requiredProperties?.[0];
  if (named) parts.push(named);
  return parts.join('.') || '(the manifest)';
}

/** Parses and checks a manifest's text; a BAD_REQUEST naming the file and field otherwise. */
export function parseManifest(fileName: string, text: string, defaults: ManifestDefaults): AppManifest {
  let raw: unknown;
  try {
    raw = parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    const message = error instanceof YAMLParseError ? error.message.split('\n')[0] : String(error);
    throw badRequest(`${fileName} is not valid YAML: ${message}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest(`${fileName} must be a mapping of fields (port, start, …)`);
  const input: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const field = MANIFEST_ALIASES[key] ?? key;
    if (field in input) throw badRequest(`${fileName}: ${key} names ${field} a second time`);
    input[field] = value;
  }
  if (input.start === undefined) throw badRequest(`${fileName}: field start is required (the long-running command, e.g. python3 app.py)`);
  if (input.port === undefined) throw badRequest(`${fileName}: field port is required (the port the app listens on in the VM)`);
  // A health check given as a mapping is checked on its own, so its error names its own field.
  const givenHealth = input.health_check;
  const [schema, value, prefix] =
    givenHealth !== null && typeof givenHealth === 'object' && !Array.isArray(givenHealth)
      ? [HealthCheck, givenHealth, 'health_check.']
      : [ManifestInput, input, ''];
  if (!Value.Check(schema, value) || !Value.Check(ManifestInput, input)) {
    const first = Value.Errors(schema, value)[0] ?? Value.Errors(ManifestInput, input)[0];
    const checked = Value.Errors(schema, value)[0] ? prefix : '';
    const field = first ? `${checked}${fieldOf(first.instancePath, first.params)}` : '(the manifest)';
    const unknown = first?.keyword === 'additionalProperties' || /schema is false/.test(first?.message ?? '');
    const problem = unknown ? 'is not a manifest field' : (first?.message ?? 'is invalid');
    throw badRequest(`${fileName}: field ${field} ${problem}`);
  }
  const manifest = input as Static<typeof ManifestInput>;
  for (const key of Object.keys(manifest.env ?? {}))
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key))
      throw badRequest(`${fileName}: field env.${key} is not a variable name (letters, digits and _, not first a digit)`);
  const kind = manifest.kind ?? 'folder';
  if (kind === 'snapshot' && !manifest.snapshot) throw badRequest(`${fileName}: field snapshot is required with kind: snapshot`);
  if (kind === 'folder' && manifest.snapshot) throw badRequest(`${fileName}: field snapshot applies to kind: snapshot only`);
  if (kind === 'snapshot' && manifest.template) throw badRequest(`${fileName}: field template applies to kind: folder only`);
  const health = typeof manifest.health_check === 'string' ? { path: manifest.health_check } : (manifest.health_check ?? {});
  return {
    name: manifest.name ?? null,
    kind,
    snapshot: manifest.snapshot ?? null,
    template: manifest.template ?? 'default',
    port: manifest.port,
    health_check: {
      path: health.path ?? '/',
      interval_seconds: health.interval_seconds ?? 5,
      timeout_seconds: health.timeout_seconds ?? 3,
      start_timeout_seconds: health.start_timeout_seconds ?? 120,
      failure_threshold: health.failure_threshold ?? 3,
    },
    install: manifest.install ?? null,
    start: manifest.start,
    env: Object.fromEntries(Object.entries(manifest.env ?? {}).map(([key, value]) => [key, String(value)])),
    secrets: manifest.secrets ?? [],
    egress: manifest.egress ? { allow: manifest.egress.allow } : null,
    vcpus: manifest.vcpus ?? defaults.vcpus,
    memory_mb: manifest.memory_mb ?? defaults.memoryMb,
    replicas: manifest.replicas ?? 1,
    public: manifest.public ?? true,
  };
}

/** Checks an app name given outside the manifest (`?name=`). */
export function checkAppName(name: string, where: string): string {
  if (!new RegExp(APP_NAME_PATTERN).test(name) || name.includes('--')) {
    throw badRequest(`${where}: an app name is 1 to 40 lower-case letters, digits and single hyphens, starting and ending with a letter or digit`);
  }
  return name;
}
