/**
 * The one typed configuration object of sandboxd, composed of one block per area (config/<area>.ts). Every setting
 * comes from an environment variable `SANDBOXD_*` (the tracing settings keep OpenTelemetry's `OTEL_*` names); this
 * folder is the only place that reads `process.env`. A bad value fails at start with a message naming the variable.
 *
 * The composer: it stands above the areas it reads (core's plans and egress policy, net's resolver addresses,
 * storage's key check, the engine's options) and under only the composition roots (services.ts, api/, app.ts,
 * main.ts, cli/), so no area imports it. Each area's service takes its own options (mostly its block as it is),
 * which services.ts hands it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { JOINED_SETTINGS_FILE } from '../core/cluster/join.ts';
import type { EngineOptions } from '../engine/index.ts';
import { splitListenAddress } from '../host/listen-address.ts';
import { authSettings } from './auth.ts';
import { browserSettings } from './browser.ts';
import { clusterSettings } from './cluster.ts';
import { desktopSettings } from './desktop.ts';
import { dockerSettings } from './docker.ts';
import { domainsSettings } from './domains.ts';
import { egressSettings } from './egress.ts';
import { executionSettings } from './execution.ts';
import { ConfigError, type Setting, type SettingValues } from './kit.ts';
import { objectsSettings } from './objects.ts';
import { observabilitySettings } from './observability.ts';
import { serverSettings } from './server.ts';
import { sshSettings } from './ssh.ts';
import { templatesSettings } from './templates.ts';
import { vaultSettings } from './vault.ts';
import { vmSettings } from './vm.ts';
import { webhooksSettings } from './webhooks.ts';

export { ConfigError } from './kit.ts';
export type { ServerConfig } from './server.ts';

/** The areas, in the order `describeSettings` lists them. */
const AREAS = {
  server: serverSettings,
  auth: authSettings,
  cluster: clusterSettings,
  vm: vmSettings,
  execution: executionSettings,
  webhooks: webhooksSettings,
  templates: templatesSettings,
  browser: browserSettings,
  desktop: desktopSettings,
  docker: dockerSettings,
  domains: domainsSettings,
  objects: objectsSettings,
  egress: egressSettings,
  vault: vaultSettings,
  ssh: sshSettings,
  observability: observabilitySettings,
};
type Areas = typeof AREAS;

/** The validated configuration: one block per area. */
export type Config = { [A in keyof Areas]: SettingValues<Areas[A]> };

type UnionToIntersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;
/** Every setting by its name (names are unique across the areas). */
type SettingsByName = UnionToIntersection<Config[keyof Config]>;
/** Values that win over the environment, by setting name (`{ poolSize: 0 }`); tests use them instead of `process.env`. */
export type ConfigOverrides = Partial<SettingsByName>;

/** Where each setting lives: its area. Built once; a name in two areas is a mistake caught here. */
const AREA_OF = new Map<string, keyof Areas>();
for (const [area, settings] of Object.entries(AREAS) as [keyof Areas, Record<string, Setting<unknown>>][]) {
  for (const name of Object.keys(settings)) {
    if (AREA_OF.has(name)) throw new Error(`setting ${name} is declared by both ${AREA_OF.get(name)} and ${area}`);
    AREA_OF.set(name, area);
  }
}

/** The settings of the data directory's JOINED_SETTINGS_FILE, if there is one: the environment wins over them. */
function joinedSettings(dataDir: string): Record<string, string> {
  const file = path.join(dataDir, JOINED_SETTINGS_FILE);
  if (!fs.existsSync(file)) return {};
  try {
    const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string' && entry[0].startsWith('SANDBOXD_')),
    );
  } catch (error) {
    throw new ConfigError(`${file}: not the JSON \`sandboxd node join\` writes (${(error as Error).message}); join again or delete it`);
  }
}

/** One area's block from the environment: each setting parsed, or its fallback when unset or empty. */
function readBlock(settings: Record<string, Setting<unknown>>, env: NodeJS.ProcessEnv): Record<string, unknown> {
  const block: Record<string, unknown> = {};
  for (const [name, setting] of Object.entries(settings)) {
    const raw = env[setting.env];
    if (raw === undefined || raw === '') {
      block[name] = setting.fallback();
      continue;
    }
    try {
      block[name] = setting.parse(raw);
    } catch (error) {
      throw new ConfigError(`${setting.env}: ${(error as Error).message} (${setting.description})`);
    }
  }
  return block;
}

/** This process's environment with `values` over it (the admin command's `node join` checks settings it is about to write). */
export function environmentWith(values: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, ...values };
}

/**
 * Builds the configuration from environment variables (default: this process's), applying defaults.
 * `overrides` wins over the environment; tests use it instead of mutating `process.env`.
 */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env, overrides: ConfigOverrides = {}): Config {
  const { dataDir: dataDirSetting } = serverSettings;
  const dataDir = overrides.dataDir ?? (environment[dataDirSetting.env] ? dataDirSetting.parse(environment[dataDirSetting.env]!) : dataDirSetting.fallback());
  const env = { ...joinedSettings(dataDir), ...environment };
  const blocks = Object.fromEntries(Object.entries(AREAS).map(([area, settings]) => [area, readBlock(settings, env)])) as Record<
    keyof Areas,
    Record<string, unknown>
  >;
  for (const [name, value] of Object.entries(overrides)) {
    const area = AREA_OF.get(name);
    if (!area) throw new Error(`no setting is named ${name}`);
    blocks[area][name] = value;
  }
  const config = blocks as Config;
  applyDerivedDefaults(config);
  return config;
}

/** Defaults drawn from other settings, and the checks that span settings. */
function applyDerivedDefaults(config: Config): void {
  const { server, cluster, vm, ssh, objects, auth } = config;
  const bracketedHost = server.host.includes(':') ? `[${server.host}]` : server.host;
  // One run root per data directory: a server's start-up recovery reaps every VM in its root that it does not know.
  const dataDirKey = createHash('sha256').update(server.dataDir).digest('hex').slice(0, 12);
  if (!vm.runDir) vm.runDir = path.join('/var/lib/sandboxd/run', dataDirKey);
  // Snapshots of users' VMs belong to this server's store, like its run directories.
  if (!vm.vmSnapshotDir) vm.vmSnapshotDir = path.join('/var/lib/sandboxd/vm-snapshots', dataDirKey);
  if (!server.publicUrl) server.publicUrl = `http://${bracketedHost}:${server.port}`;
  resolveInternalListener(config);
  if (!server.adminListen) server.adminListen = `127.0.0.1:${server.port === 0 ? 0 : server.port + 1}`;
  if (!ssh.sshListen) ssh.sshListen = `${bracketedHost}:${server.port === 0 ? 0 : 2222}`;
  if (cluster.nodeDeadAfterSeconds <= 2 * cluster.nodeHeartbeatSeconds) {
    throw new ConfigError(
      `SANDBOXD_NODE_DEAD_AFTER_SECONDS (${cluster.nodeDeadAfterSeconds}) must be more than twice SANDBOXD_NODE_HEARTBEAT_SECONDS (${cluster.nodeHeartbeatSeconds})`,
    );
  }
  if (!objects.objectStoreDir) objects.objectStoreDir = path.join(server.dataDir, 'objects');
  if (objects.objectStore === 's3') checkS3Settings(config.objects);
  if (!(auth.defaultPlan in auth.plans)) {
    throw new ConfigError(`SANDBOXD_DEFAULT_PLAN: "${auth.defaultPlan}" is not a plan (known: ${Object.keys(auth.plans).join(', ')})`);
  }
}

/**
 * The internal listener's address and the URL the other nodes reach it at: the URL follows the listener unless
 * given (with port 0 it is only known once bound, and stays empty here). Internal routes are never on the public
 * listener, so an internal URL that names the public port with no listener of its own configured (the set-up
 * from before they were split) is refused with what to change, rather than leaving a cluster that cannot reach
 * its VMs.
 */
function resolveInternalListener({ server, cluster }: Config): void {
  const listenGiven = cluster.internalListen !== '';
  if (!listenGiven) cluster.internalListen = `127.0.0.1:${server.port === 0 ? 0 : server.port + 2}`;
  if (cluster.internalListen === 'off') {
    if (server.databaseUrl)
      throw new ConfigError(
        'SANDBOXD_INTERNAL_LISTEN: cannot be off in cluster mode (SANDBOXD_DATABASE_URL set): the other nodes reach this node\u2019s VMs through it',
      );
    return;
  }
  const { host, port } = splitListenAddress(cluster.internalListen);
  if (cluster.internalUrl) {
    const url = new URL(cluster.internalUrl);
    const urlPort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    if (!listenGiven && urlPort === server.port) {
      throw new ConfigError(
        `SANDBOXD_INTERNAL_URL (${cluster.internalUrl}) names the public port ${server.port}, but internal routes are served only by the internal listener: set SANDBOXD_INTERNAL_LISTEN to this node's private address and port (e.g. 10.0.0.2:${server.port + 2}) and SANDBOXD_INTERNAL_URL to match (or leave it unset)`,
      );
    }
    return;
  }
  if (['0.0.0.0', '::', ''].includes(host)) {
    throw new ConfigError(
      `SANDBOXD_INTERNAL_URL: required when SANDBOXD_INTERNAL_LISTEN (${cluster.internalListen}) listens on every address: name the address the other nodes reach this node at`,
    );
  }
  if (port !== 0) cluster.internalUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** An S3 object store needs a place and, if any, a whole key pair; each missing piece is named. */
function checkS3Settings(objects: Config['objects']): void {
  for (const key of ['s3Endpoint', 's3Bucket'] as const) {
    if (!objects[key]) throw new ConfigError(`${objectsSettings[key].env}: required when SANDBOXD_OBJECT_STORE=s3 (${objectsSettings[key].description})`);
  }
  if (objects.s3AccessKeyId && !objects.s3SecretAccessKey)
    throw new ConfigError('SANDBOXD_S3_SECRET_ACCESS_KEY: required when SANDBOXD_S3_ACCESS_KEY_ID is set');
  if (objects.s3SecretAccessKey && !objects.s3AccessKeyId)
    throw new ConfigError('SANDBOXD_S3_ACCESS_KEY_ID: required when SANDBOXD_S3_SECRET_ACCESS_KEY is set');
}

/** The VM engine's options: the `vm` block, with this node's name, the data directory and the registries templates use. */
export function engineOptions(config: Config): EngineOptions {
  return {
    vm: config.vm,
    nodeId: config.cluster.nodeId,
    dataDir: config.server.dataDir,
    registries: { insecureRegistries: config.templates.templateInsecureRegistries, allowPrivateRegistries: config.templates.templateRegistryAllowPrivate },
    artifacts: artifactsEnabled(config)
      ? { objects: config.objects, cacheLimitBytes: config.objects.artifactCacheMb * 2 ** 20, gcGraceMs: config.objects.artifactGcGraceSeconds * 1000 }
      : null,
  };
}

/** Whether captures and templates go to the object store (`SANDBOXD_ARTIFACTS`; auto: with an S3 store, which every node reaches). */
export function artifactsEnabled(config: Config): boolean {
  const { artifacts, objectStore } = config.objects;
  return artifacts === 'on' || (artifacts === 'auto' && objectStore === 's3');
}

/**
 * Every setting in full, for the configuration reference (scripts/docs-config.mts writes
 * docs/reference/configuration.md from it): its area, variable, description, and default (the value `fallback()`
 * gives, or `defaultText` where that depends on the machine).
 */
export function describeSettingsInDetail(): { area: string; env: string; description: string; defaultValue: unknown; defaultText?: string }[] {
  return Object.entries(AREAS).flatMap(([area, settings]) =>
    Object.values(settings as Record<string, Setting<unknown>>).map((setting) => ({
      area,
      env: setting.env,
      description: setting.description,
      defaultValue: setting.defaultText === undefined ? setting.fallback() : undefined,
      ...(setting.defaultText !== undefined ? { defaultText: setting.defaultText } : {}),
    })),
  );
}

/** The documented settings, for the docs' configuration reference and `sandboxd --help`. */
export function describeSettings(): { env: string; description: string }[] {
  return Object.values(AREAS).flatMap((settings) =>
    Object.values(settings as Record<string, Setting<unknown>>).map(({ env, description }) => ({ env, description })),
  );
}
