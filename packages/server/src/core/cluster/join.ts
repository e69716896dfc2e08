/**
 * Joining a machine to a cluster with one token: `sandboxd cluster token` on a node of the cluster prints it,
 * `sandboxd node join <token>` on the new machine checks it against the shared database and writes the cluster
 * settings into that machine's data directory (`cluster.json`, which `loadConfig` reads under the environment),
 * so `npm start` there starts a node of the cluster. The token carries what a node needs and nothing else: the
 * PostgreSQL URL (with its password), the cluster secret that signs traffic between nodes and the vault key
 * (which the database never holds), so it is a credential: pass it like a password (it is printed once, never
 * logged, and the file is 0600).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from '../errors.ts';
import type { Database } from '../../store/database.ts';
import { listNodes } from '../../store/nodes-store.ts';
import { readOrInitSetting } from '../../store/settings-store.ts';

const TOKEN_PREFIX = 'sbxd-cluster-v1.';

/** Cluster settings `sandboxd node join` writes into the data directory; `loadConfig` reads them under the environment. */
export const JOINED_SETTINGS_FILE = 'cluster.json';

export interface ClusterToken {
  databaseUrl: string;
  clusterSecret: string;
  /** The deployment's vault key (core/vault/vault-key.ts), which every node needs and the store never holds. */
  vaultKey?: string;
}

export function encodeClusterToken(token: ClusterToken): string {
  return (
    TOKEN_PREFIX +
    Buffer.from(
      JSON.stringify({ database_url: token.databaseUrl, cluster_secret: token.clusterSecret, ...(token.vaultKey ? { vault_key: token.vaultKey } : {}) }),
    ).toString('base64url')
  );
}

export function decodeClusterToken(raw: string): ClusterToken {
  const text = raw.trim();
  if (!text.startsWith(TOKEN_PREFIX))
    throw new AppError(
      'BAD_REQUEST',
      `not a sandboxd cluster token (it starts with "${TOKEN_PREFIX}"; print one with \`sandboxd cluster token\` on a node of the cluster)`,
    );
  let fields: { database_url?: unknown; cluster_secret?: unknown; vault_key?: unknown };
  try {
    fields = JSON.parse(Buffer.from(text.slice(TOKEN_PREFIX.length), 'base64url').toString('utf8')) as typeof fields;
  } catch {
    throw new AppError('BAD_REQUEST', 'the cluster token is damaged (copy it whole)');
  }
  const { database_url: databaseUrl, cluster_secret: clusterSecret } = fields;
  if (typeof databaseUrl !== 'string' || !/^postgres(ql)?:\/\//.test(databaseUrl) || typeof clusterSecret !== 'string' || clusterSecret.length < 32) {
    throw new AppError('BAD_REQUEST', 'the cluster token is damaged (copy it whole)');
  }
  const vaultKey = fields.vault_key;
  if (vaultKey !== undefined && (typeof vaultKey !== 'string' || vaultKey.length < 32))
    throw new AppError('BAD_REQUEST', 'the cluster token is damaged (copy it whole)');
  return { databaseUrl, clusterSecret, ...(vaultKey ? { vaultKey } : {}) };
}

/** The token of the cluster whose database this is: its URL, the secret its nodes sign with, and this node's vault key. */
export async function clusterTokenOf(
  database: Database,
  databaseUrl: string,
  configuredSecret: string | null,
  vaultKey: string | null = null,
): Promise<string> {
  // The same secret the running nodes use: the configured one, else the one generated into the store.
  const clusterSecret = configuredSecret ?? (await readOrInitSetting(database.db, 'cluster.internal_secret', randomBytes(48).toString('base64url')));
  return encodeClusterToken({ databaseUrl, clusterSecret, ...(vaultKey ? { vaultKey } : {}) });
}

export interface JoinOptions {
  dataDir: string;
  /** Where the other nodes reach this node (SANDBOXD_INTERNAL_URL); default its internal listener's address. */
  internalUrl?: string;
  /** The internal listener's address on the nodes' network (SANDBOXD_INTERNAL_LISTEN). */
  internalListen?: string;
  nodeId?: string;
}

/**
 * Writes the cluster settings for this machine after the database answered (opened and migrated by the caller
 * with the token's URL); returns the nodes already there. Settings already in the file are replaced.
 */
export async function joinCluster(
  database: Database,
  token: ClusterToken,
  options: JoinOptions,
): Promise<{ file: string; nodes: { id: string; state: string }[] }> {
  const nodes = (await listNodes(database.db)).map((n) => ({ id: n.id, state: n.state }));
  const settings: Record<string, string> = { SANDBOXD_DATABASE_URL: token.databaseUrl, SANDBOXD_CLUSTER_SECRET: token.clusterSecret };
  if (token.vaultKey) settings.SANDBOXD_VAULT_KEY = token.vaultKey;
  if (options.internalUrl) settings.SANDBOXD_INTERNAL_URL = options.internalUrl;
  if (options.internalListen) settings.SANDBOXD_INTERNAL_LISTEN = options.internalListen;
  if (options.nodeId) {
    if (nodes.some((n) => n.id === options.nodeId && n.state === 'live'))
      throw new AppError('CONFLICT', `a live node is already called ${options.nodeId}: pick another --node-id`);
    settings.SANDBOXD_NODE_ID = options.nodeId;
  }
  fs.mkdirSync(options.dataDir, { recursive: true });
  const file = path.join(options.dataDir, JOINED_SETTINGS_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  fs.renameSync(temporary, file);
  return { file, nodes };
}
