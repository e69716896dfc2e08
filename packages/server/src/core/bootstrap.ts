/**
 * First start: when the store has no users, create the admin user and an admin API key. The caller
 * prints the key once and this module writes it to `<data dir>/admin-api-key` (mode 0600).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { ApiKeyService } from './api-keys.ts';
import { AppError } from './errors.ts';
import type { UserService } from './users.ts';
import type { Database } from '../store/database.ts';
import { countUsers } from '../store/users-store.ts';

export interface BootstrapResult {
  username: string;
  /** Set when the password was generated (not configured): shown once. */
  generatedPassword: string | null;
  apiKey: string;
  keyFile: string;
}

export async function bootstrapAdmin(options: {
  database: Database;
  users: UserService;
  apiKeys: ApiKeyService;
  dataDir: string;
  username: string;
  password: string | null;
}): Promise<BootstrapResult | null> {
  if ((await countUsers(options.database.db)) > 0) return null;
  const generatedPassword = options.password ? null : randomBytes(18).toString('base64url');
  let admin;
  try {
    admin = await options.users.create({
      username: options.username,
      password: options.password ?? generatedPassword!,
      plan: 'enterprise',
      isAdmin: true,
    });
  } catch (error) {
    // Another node of the cluster bootstrapped at the same moment: it owns the first key.
    if (error instanceof AppError && error.code === 'CONFLICT') return null;
    throw error;
  }
  const key = await options.apiKeys.create(admin.id, { description: 'admin key created on first start' });
  await fs.mkdir(options.dataDir, { recursive: true, mode: 0o700 });
  const keyFile = path.join(options.dataDir, 'admin-api-key');
  await fs.writeFile(keyFile, `${key.fullKey}\n`, { mode: 0o600 });
  await fs.chmod(keyFile, 0o600);
  return { username: admin.username, generatedPassword, apiKey: key.fullKey, keyFile };
}
