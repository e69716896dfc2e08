import type { Executor } from '../store/database.ts';
/** One user's quota checks at a time (VMs, volumes), across the nodes of a cluster. */

/** Serialises quota checks per user: PostgreSQL row lock; SQLite transactions are already serialised. */
export async function lockUser(trx: Executor, dialect: string, userId: number): Promise<void> {
  if (dialect === 'postgres') await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute();
}
