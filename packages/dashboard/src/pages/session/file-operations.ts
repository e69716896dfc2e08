/** The Files panel's calls to the files API of a session's VM (every one owner-checked by the server). */
import { api, send, withQuery, type FileEntry, type FileListing } from '../../api.ts';
import { pathIn } from './file-paths.ts';
import { sessionPath } from './session-path.ts';

export function listDirectory(sessionId: string, path: string): Promise<FileListing> {
  return api<FileListing>('GET', withQuery(sessionPath(sessionId, '/files'), { path }));
}

/** Makes the directory (and missing parents); false when it was already there. */
export async function makeDirectory(sessionId: string, path: string): Promise<boolean> {
  const made = await api<{ created: boolean }>('POST', sessionPath(sessionId, '/files/mkdir'), { path, parents: true });
  return made.created;
}

/** Renames or moves; 409 when something is already at `to` (never overwritten from the console). */
export function renamePath(sessionId: string, from: string, to: string): Promise<FileEntry> {
  return api<FileEntry>('POST', sessionPath(sessionId, '/files/rename'), { from, to, overwrite: false });
}

/** Removes a file, or a directory with everything in it. */
export async function removePath(sessionId: string, entry: FileEntry): Promise<void> {
  await api('DELETE', withQuery(sessionPath(sessionId, '/files'), { path: entry.path, recursive: entry.type === 'directory' ? 'true' : undefined }));
}

/** Uploads a file into `dir` under its own name (streamed into the VM by the server). */
export async function uploadInto(sessionId: string, dir: string, file: File): Promise<void> {
  const form = new FormData();
  form.set('session_id', sessionId);
  form.set('remote_path', pathIn(dir, file.name));
  form.set('file', file, file.name);
  await send('POST', '/upload', form);
}

/**
 * Saves a file of the VM in the browser's downloads. The server streams its bytes; the browser holds them as a
 * blob until they are saved (a POST with the CSRF header cannot be a plain link).
 */
export async function downloadFile(sessionId: string, entry: FileEntry): Promise<void> {
  const response = await send('POST', '/download', { session_id: sessionId, filename: entry.path }, 'application/octet-stream');
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = entry.name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
