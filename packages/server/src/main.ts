/**
 * Runs sandboxd: configuration, first-start bootstrap, listen, and a graceful shutdown on SIGINT/SIGTERM.
 */
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
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

  const { app, services } = await buildApp({ config });
  const admin = await bootstrapAdmin({
    database: services.database,
    users: services.users,
    apiKeys: services.apiKeys,
    dataDir: config.dataDir,
    username: config.adminUsername,
    password: config.adminPassword,
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

  await app.listen({ host: config.host, port: config.port });
  app.log.info({ url: config.publicUrl, store: services.database.dialect }, 'sandboxd is serving');
  // Which key seals vault secrets (never one kept in the store), or why the vault is refused on this node.
  const vaultKey = services.vaultBox;
  if (vaultKey.available) app.log.info({ source: vaultKey.source, file: vaultKey.file, resealed: vaultKey.resealed.resealed }, vaultKey.describe());
  else app.log.warn({ source: vaultKey.source }, vaultKey.describe());
  // Warm up in the background: the first start on a machine builds snapshots (tens of seconds under TCG).
  services.sandbox.vms.start().then(
    async ({ adopted, ended }) => {
      app.log.info({ adopted, ended }, 'VMs reconciled with the store');
      // The re-adopted VMs get their egress policies back; rules of VMs that are gone are reaped.
      await services.sandbox.egress.recover().catch((error: unknown) => app.log.error({ err: error }, 'egress policies of re-adopted VMs could not be re-applied; the reconcile loop retries'));
    },
    (error: unknown) => app.log.error({ err: error }, 'the VM engine could not start; VM requests answer 503 until it can'),
  );
  // Ends browser sessions a previous process left, and fills the browser pool when it has a size.
  services.sandbox.browserService.start().catch((error: unknown) => app.log.error({ err: error }, 'the browser service could not start; browser requests retry it'));
}

main().catch((error) => {
  console.error('sandboxd: failed to start:', error);
  process.exit(1);
});
