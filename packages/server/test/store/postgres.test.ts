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
