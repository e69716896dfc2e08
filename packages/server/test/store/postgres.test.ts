// test-lane: light (a private PostgreSQL server of its own, on a port of its own: it runs beside the VM tests; no VM)
import { openDatabase } from '../../src/store/database.ts';
import { startPostgres } from '../helpers/postgres.ts';
import { defineStoreContract } from './store-contract.ts';

defineStoreContract('PostgreSQL', async () => {
  const server = await startPostgres();
  try {
    const database = await openDatabase({ dataDir: '/nonexistent-unused', databaseUrl: server.url });
    return { database, cleanup: () => server.stop() };
  } catch (error) {
    await server.stop();
    throw error;
  }
});
