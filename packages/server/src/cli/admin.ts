/**
 * `sandboxd` — the server's admin command. Works offline, directly against the configured store
 * (SANDBOXD_DATA_DIR / SANDBOXD_DATABASE_URL), so it can create users and keys without a running server.
 *
 *   sandboxd serve
 *   sandboxd user create <username> [--password P | --password-stdin] [--plan PLAN] [--admin]
 *   sandboxd user passwd <username> [--password P | --password-stdin]
 *   sandboxd user plan <username> <plan>
 *   sandboxd key create <username> [--description TEXT] [--expires-at ISO]
 *   sandboxd cluster token
 *   sandboxd node join <token> [--internal-listen HOST:PORT] [--internal-url URL] [--node-id ID]
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ConfigError, describeSettings, environmentWith, loadConfig } from '../config/index.ts';
import { AppError } from '../core/errors.ts';
import { clusterTokenOf, decodeClusterToken, joinCluster } from '../core/cluster/join.ts';
import { readVaultKeyMaterial } from '../core/vault/vault-key.ts';
import { createServices, type CoreServices } from '../services.ts';
import { openDatabase } from '../store/database.ts';

const USAGE = `usage:
  sandboxd serve                                   run the API server (same as npm start without set-up)
  sandboxd user create <username> [--password P | --password-stdin] [--plan PLAN] [--admin]
  sandboxd user passwd <username> [--password P | --password-stdin]
  sandboxd user plan <username> <plan>
  sandboxd key create <username> [--description TEXT] [--expires-at ISO-8601]
  sandboxd cluster token                           print the token that joins a machine to this cluster (a credential:
                                                   it holds the database URL, the cluster secret and
                                                   the vault key)
  sandboxd node join <token> [--internal-listen HOST:PORT] [--internal-url URL] [--node-id ID]
                                                   make this machine a node of that cluster: checks the database, then
                                                   writes the settings to <data dir>/cluster.json (the environment
                                                   still wins); start it with npm start. --internal-listen: this
                                                   node's address on the private network, where the other nodes
                                                   reach it (the internal URL follows unless given)

Options may also be given as --json to print machine-readable output.
Configuration (environment):
${describeSettings()
  .map((s) => `  ${s.env.padEnd(34)} ${s.description}`)
  .join('\n')}`;

/** A database URL without its password, to show. */
function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function withServices<T>(run: (services: CoreServices) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await openDatabase({ dataDir: config.server.dataDir, databaseUrl: config.server.databaseUrl });
  try {
    return await run(await createServices(config, database));
  } finally {
    await database.close();
  }
}

function print(json: boolean, value: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : `${text}\n`);
}

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      plan: { type: 'string' },
      admin: { type: 'boolean' },
      description: { type: 'string' },
      'expires-at': { type: 'string' },
      'internal-url': { type: 'string' },
      'internal-listen': { type: 'string' },
      'node-id': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [group, action, name, extra] = positionals;
  const json = values.json ?? false;
  if (values.help || !group) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  if (group === 'serve') {
    await import('../main.ts');
    return -1; // keep running
  }

  const password = async (): Promise<{ password: string; generated: boolean }> => {
    if (values['password-stdin']) return { password: await readStdin(), generated: false };
    if (values.password) return { password: values.password, generated: false };
    return { password: randomBytes(18).toString('base64url'), generated: true };
  };

  if (group === 'user' && action === 'create' && name) {
    const { password: pw, generated } = await password();
    const user = await withServices((s) => s.users.create({ username: name, password: pw, plan: values.plan, isAdmin: values.admin ?? false }));
    print(
      json,
      { id: user.id, username: user.username, plan: user.plan, is_admin: user.isAdmin, ...(generated ? { password: pw } : {}) },
      `created user ${user.username} (id ${user.id}, plan ${user.plan}${user.isAdmin ? ', admin' : ''})${generated ? `\npassword: ${pw}` : ''}`,
    );
    return 0;
  }
  if (group === 'user' && action === 'passwd' && name) {
    const { password: pw, generated } = await password();
    await withServices((s) => s.users.setPassword(name, pw));
    print(json, { username: name, ...(generated ? { password: pw } : {}) }, `password of ${name} changed${generated ? `\npassword: ${pw}` : ''}`);
    return 0;
  }
  if (group === 'user' && action === 'plan' && name && extra) {
    await withServices((s) => s.users.setPlan(name, extra));
    print(json, { username: name, plan: extra }, `${name} is now on plan ${extra}`);
    return 0;
  }
  if (group === 'key' && action === 'create' && name) {
    const key = await withServices(async (s) => {
      const user = await s.users.getByUsername(name);
      if (!user) throw new AppError('NOT_FOUND', `user ${name} not found`);
      return s.apiKeys.create(user.id, { description: values.description ?? 'created with sandboxd key create', expiresAt: values['expires-at'] ?? null });
    });
    print(json, { id: key.id, key_prefix: key.keyPrefix, user_id: key.userId, full_key: key.fullKey, expires_at: key.expiresAt }, key.fullKey);
    return 0;
  }
  if (group === 'cluster' && action === 'token' && !name) {
    const config = loadConfig();
    // Checked before a store is opened: the embedded one would be created for nothing.
    if (!config.server.databaseUrl)
      throw new AppError('BAD_REQUEST', 'this node runs on the embedded SQLite store: cluster mode needs SANDBOXD_DATABASE_URL (PostgreSQL) on every node');
    const database = await openDatabase({ dataDir: config.server.dataDir, databaseUrl: config.server.databaseUrl });
    try {
      // The vault key travels in the token: the store never holds it, and every node needs the same one.
      const token = await clusterTokenOf(
        database,
        config.server.databaseUrl,
        config.cluster.clusterSecret,
        readVaultKeyMaterial({ vaultKey: config.vault.vaultKey, dataDir: config.server.dataDir }),
      );
      print(json, { token }, token);
    } finally {
      await database.close();
    }
    return 0;
  }
  if (group === 'node' && action === 'join' && name && !extra) {
    const token = decodeClusterToken(name);
    // The settings are checked like the server would check them before anything is written.
    const config = loadConfig(
      environmentWith({
        SANDBOXD_DATABASE_URL: token.databaseUrl,
        SANDBOXD_CLUSTER_SECRET: token.clusterSecret,
        ...(token.vaultKey ? { SANDBOXD_VAULT_KEY: token.vaultKey } : {}),
        ...(values['internal-url'] ? { SANDBOXD_INTERNAL_URL: values['internal-url'] } : {}),
        ...(values['internal-listen'] ? { SANDBOXD_INTERNAL_LISTEN: values['internal-listen'] } : {}),
        ...(values['node-id'] ? { SANDBOXD_NODE_ID: values['node-id'] } : {}),
      }),
    );
    process.stderr.write(`checking the cluster's database at ${redactedUrl(token.databaseUrl)}…\n`);
    const database = await openDatabase({ dataDir: config.server.dataDir, databaseUrl: token.databaseUrl });
    try {
      const joined = await joinCluster(database, token, {
        dataDir: config.server.dataDir,
        ...(values['internal-url'] ? { internalUrl: config.cluster.internalUrl } : {}),
        ...(values['internal-listen'] ? { internalListen: config.cluster.internalListen } : {}),
        ...(values['node-id'] ? { nodeId: config.cluster.nodeId } : {}),
      });
      const live = joined.nodes.filter((n) => n.state === 'live').map((n) => n.id);
      print(
        json,
        { settings_file: joined.file, node_id: config.cluster.nodeId, internal_url: config.cluster.internalUrl, live_nodes: live },
        `joined: ${joined.file} holds the cluster settings (${live.length} live node${live.length === 1 ? '' : 's'}: ${live.join(', ') || 'none yet'}).\n` +
          `This machine is node ${config.cluster.nodeId}, reached by the others at ${config.cluster.internalUrl}. Start it with \`npm start\` (or \`sandboxd serve\`).`,
      );
      if (/^https?:\/\/(127\.|localhost[:/]|\[::1\])/.test(config.cluster.internalUrl)) {
        process.stderr.write(
          'note: that address is loopback, which the other nodes cannot reach: join again with --internal-listen <private address>:<port>\n',
        );
      }
    } finally {
      await database.close();
    }
    return 0;
  }
  process.stderr.write(`sandboxd: unknown command "${positionals.join(' ')}"\n${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error) => {
    if (error instanceof AppError || error instanceof ConfigError) {
      process.stderr.write(`sandboxd: ${error.message}\n`);
      process.exit(error instanceof ConfigError ? 2 : 1);
    }
    process.stderr.write(`sandboxd: ${(error as Error).stack ?? error}\n`);
    process.exit(1);
  },
);
