/**
 * Runs sandboxd: configuration, first-start bootstrap, listen, and a graceful shutdown on SIGINT/SIGTERM.
 */
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config/index.ts';
import { bootstrapAdmin } from './core/bootstrap.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`sandboxd: bad configuration: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }

  // Warm-up: the engine re-adopts (or reaps) the VMs a previous process left and the browser pool fills, in the
  // background once the app is ready (app-workers.ts has the order).
  const { app, services } = await buildApp({ config, warmUp: true });
  const admin = await bootstrapAdmin({
    database: services.database,
    users: services.users,
    apiKeys: services.apiKeys,
    dataDir: config.server.dataDir,
    username: config.auth.adminUsername,
    password: config.auth.adminPassword,
  });
  if (admin) {
    // Printed once, on the terminal only (never through the logger, which may ship lines elsewhere).
    process.stdout.write(
      [
        '',
        `sandboxd: first start — created admin user "${admin.username}" and an admin API key:`,
        '',
        `    ${admin.apiKey}`,
        '',
        `It is also in ${admin.keyFile} (mode 0600). It will not be shown again.`,
        ...(admin.generatedPassword ? [`Admin password (for POST /v1/auth/token): ${admin.generatedPassword}`] : []),
        '',
      ].join('\n') + '\n',
    );
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  await app.listen({ host: config.server.host, port: config.server.port });
  app.log.info({ url: config.server.publicUrl, store: services.database.dialect }, 'sandboxd is serving');
  // Which key seals vault secrets (never one kept in the store), or why the vault is refused on this node.
  const vaultKey = services.vaultBox;
  if (vaultKey.available) app.log.info({ source: vaultKey.source, file: vaultKey.file, resealed: vaultKey.resealed.resealed }, vaultKey.describe());
  else app.log.warn({ source: vaultKey.source }, vaultKey.describe());
}

main().catch((error) => {
  console.error('sandboxd: failed to start:', error);
  process.exit(1);
});
