/** Persistence of desktop recordings saved to the object store. Reads are scoped by user and session. */
import type { DesktopRecordingRow } from './schema.ts';
import type { Executor } from './database.ts';
import type { DesktopRecordingStatus, StoredRecording } from '../activity.ts';

export type { DesktopRecordingRow };

function toStoredRecording(row: DesktopRecordingRow): StoredRecording {
  return {
    id: row.id,
    userId: row.user_id,
    sessionId: row.session_id,
    vmId: row.vm_id,
    status: row.status as DesktopRecordingStatus,
    durationSeconds: row.duration_seconds,
    sizeBytes: row.size_bytes,
    width: row.width,
    height: row.height,
    objectKey: row.object_key,
    error: row.error,
    startedAt: row.started_at,
    stoppedAt: row.stopped_at,
    createdAt: row.created_at,
    savedAt: row.saved_at,
  };
}

export async function insertDesktopRecording(db: Executor, row: DesktopRecordingRow): Promise<void> {
  await db.insertInto('desktop_recordings').values(row).execute();
}

export async function findDesktopRecording(db: Executor, userId: number, sessionId: string, id: string): Promise<StoredRecording | undefined> {
  const row = await db
    .selectFrom('desktop_recordings')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  return row && toStoredRecording(row);
}

/** A session's recordings, newest first. */
export async function listDesktopRecordings(db: Executor, userId: number, sessionId: string, limit: number, offset: number): Promise<StoredRecording[]> {
  const rows = await db
    .selectFrom('desktop_recordings')
    .selectAll()
    .where('user_id', '=', userId)
    .where('session_id', '=', sessionId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .limit(limit)
    .offset(offset)
    .execute();
  return rows.map(toStoredRecording);
}

export async function updateDesktopRecording(
  db: Executor,
  id: string,
  changes: Partial<Omit<DesktopRecordingRow, 'id' | 'user_id' | 'session_id'>>,
): Promise<void> {
  await db.updateTable('desktop_recordings').set(changes).where('id', '=', id).execute();
}

export async function deleteDesktopRecording(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('desktop_recordings').where('id', '=', id).execute();
}

/** Recordings a server process was still saving when it ended (their VM tunnel went with it). */
export async function failUnsavedDesktopRecordings(db: Executor, error: string): Promise<number> {
  const result = await db.updateTable('desktop_recordings').set({ status: 'failed', error }).where('status', '=', 'saving').executeTakeFirst();
  return Number(result.numUpdatedRows);
}
