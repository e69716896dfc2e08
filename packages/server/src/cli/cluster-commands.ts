/** `sandboxd cluster token` and `sandboxd node join`: how a machine becomes a node of a PostgreSQL cluster. */
import type { Command } from 'commander';
import { environmentWith, loadConfig } from '../config/index.ts';
import { clusterTokenOf, decodeClusterToken, joinCluster } from '../core/cluster/join.ts';
import { AppError } from '../core/errors.ts';
import { readVaultKeyMaterial } from '../core/vault/vault-key.ts';
import { openDatabase } from '../store/database.ts';
import { print, redactedUrl, wantsJson } from './context.ts';

export function registerClusterCommands(program: Command): void {
  const cluster = program.command('cluster').description('the cluster this node belongs to');
  cluster
    .command('token')
    .description('print the token that joins a machine to this cluster')
    .addHelpText(
      'after',
      '\nThe token is a credential: it holds the database URL, the cluster secret and the vault key. Needs the\n' + 'PostgreSQL store (SANDBOXD_DATABASE_URL).',
    )
    .action(async (_options: unknown, command: Command) => {
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
        print(wantsJson(command), { token }, token);
      } finally {
        await database.close();
      }
    });

  const node = program.command('node').description('this machine as a node of a cluster');
  node
    .command('join')
    .description('make this machine a node of the cluster a token names')
    .argument('<token>', 'from `sandboxd cluster token` on a node of that cluster')
    .option('--internal-listen <host:port>', 'this node’s address on the private network, where the other nodes reach it')
    .option('--internal-url <url>', 'the URL the other nodes reach this node at (default: follows --internal-listen)')
    .option('--node-id <id>', 'this node’s id (default: SANDBOXD_NODE_ID or the host name)')
    .addHelpText(
      'after',
      '\nChecks the cluster’s database, then writes the settings to <data dir>/cluster.json (the environment still\n' +
        'wins over it); start the node with `npm start` or `sandboxd serve`.',
    )
    .action(async (tokenText: string, options: { internalListen?: string; internalUrl?: string; nodeId?: string }, command: Command) => {
      const token = decodeClusterToken(tokenText);
      // The settings are checked like the server would check them before anything is written.
      const config = loadConfig(
        environmentWith({
          SANDBOXD_DATABASE_URL: token.databaseUrl,
          SANDBOXD_CLUSTER_SECRET: token.clusterSecret,
          ...(token.vaultKey ? { SANDBOXD_VAULT_KEY: token.vaultKey } : {}),
          ...(options.internalUrl ? { SANDBOXD_INTERNAL_URL: options.internalUrl } : {}),
          ...(options.internalListen ? { SANDBOXD_INTERNAL_LISTEN: options.internalListen } : {}),
          ...(options.nodeId ? { SANDBOXD_NODE_ID: options.nodeId } : {}),
        }),
      );
      process.stderr.write(`checking the cluster's database at ${redactedUrl(token.databaseUrl)}…\n`);
      const database = await openDatabase({ dataDir: config.server.dataDir, databaseUrl: token.databaseUrl });
      try {
        const joined = await joinCluster(database, token, {
          dataDir: config.server.dataDir,
          ...(options.internalUrl ? { internalUrl: config.cluster.internalUrl } : {}),
          ...(options.internalListen ? { internalListen: config.cluster.internalListen } : {}),
          ...(options.nodeId ? { nodeId: config.cluster.nodeId } : {}),
        });
        const live = joined.nodes.filter((n) => n.state === 'live').map((n) => n.id);
        print(
          wantsJson(command),
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
    });
}
