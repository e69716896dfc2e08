import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/store/database.ts';
import { defineStoreContract } from './store-contract.ts';

defineStoreContract('SQLite', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-sqlite-'));
  const database = await openDatabase({ dataDir, databaseUrl: null });
  return { database, cleanup: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
});
