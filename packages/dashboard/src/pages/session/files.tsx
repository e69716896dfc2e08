/**
 * The files of the session's VM: browse its directories, see each entry's type, size and time, upload into the
 * directory shown, download, make a folder, rename and delete. The API's refusals (nothing there, something in
 * the way) are shown as it words them. Names are the guest's: React shows them as text, never as markup.
 */
import { useState, type FormEvent } from 'react';
import type { FileEntry } from '../../api.ts';
import { ErrorBanner, useLoad } from '../../ui.tsx';
import { downloadFile, listDirectory, makeDirectory, removePath, renamePath, uploadInto } from './file-operations.ts';
import { parentOf, pathIn } from './file-paths.ts';
import { FileRow, type FileRowActions } from './file-row.tsx';

/** Directories first, then by name (the API sorts by name). */
function directoriesFirst(entries: readonly FileEntry[]): FileEntry[] {
  return [...entries].sort((a, b) => Number(b.type === 'directory') - Number(a.type === 'directory'));
}

/** `version` changes when something else may have changed the files (a run ended): the listing is read again. */
export function Files({ sessionId, version = 0 }: { sessionId: string; version?: number }) {
  const [dir, setDir] = useState('/root');
  const listing = useLoad(() => listDirectory(sessionId, dir), [sessionId, dir, version]);
  const [error, setError] = useState<unknown>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The directory on screen: the last one listed (a directory that failed to open leaves the previous one shown).
  const shown = listing.data?.path ?? dir;

  /** Runs one operation: its error or its notice is shown, and the listing is read again after it. */
  const act = async (work: () => Promise<string>): Promise<boolean> => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      setNotice(await work());
      return true;
    } catch (reason) {
      setError(reason);
      return false;
    } finally {
      setBusy(false);
      listing.reload();
    }
  };

  const open = (path: string) => {
    setError(null);
    setNotice(null);
    setDir(path);
  };

  const actions: FileRowActions = {
    open,
    download: (entry) => {
      setError(null);
      downloadFile(sessionId, entry).catch(setError);
    },
    rename: (entry, name) =>
      act(async () => {
        const moved = await renamePath(sessionId, entry.path, pathIn(shown, name));
        return `Renamed ${entry.name} to ${moved.path}`;
      }),
    remove: (entry) => {
      const what = entry.type === 'directory' ? `the folder ${entry.path} and everything in it` : entry.path;
      if (!window.confirm(`Delete ${what}?`)) return;
      void act(async () => {
        await removePath(sessionId, entry);
        return `Deleted ${entry.name}`;
      });
    },
  };

  const makeFolder = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const name = String(new FormData(form).get('folder') ?? '').trim();
    if (!name) return;
    void act(async () => {
      const path = pathIn(shown, name);
      const created = await makeDirectory(sessionId, path);
      form.reset();
      return created ? `Created folder ${name}` : `${path} was already there`;
    });
  };

  const upload = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = event.currentTarget;
    const files = [...((form.elements.namedItem('file') as HTMLInputElement).files ?? [])];
    if (files.length === 0) return;
    void act(async () => {
      for (const file of files) {
        setNotice(`Uploading ${file.name}…`);
        await uploadInto(sessionId, shown, file);
      }
      form.reset();
      return `Uploaded ${files.map((file) => file.name).join(', ')}`;
    });
  };

  const entries = directoriesFirst(listing.data?.entries ?? []);
  return (
    <section className="card wide" aria-labelledby="files-heading">
      <h2 id="files-heading">Files</h2>
      <form
        className="row"
        onSubmit={(event) => {
          event.preventDefault();
          open(String(new FormData(event.currentTarget).get('dir') || '/root'));
        }}
      >
        <label htmlFor="dir" className="visually-hidden">
          Directory
        </label>
        <input id="dir" name="dir" key={shown} defaultValue={shown} />
        <button type="submit">Open</button>
        <button type="button" onClick={() => open(parentOf(shown))} disabled={shown === '/'}>
          Up
        </button>
        <button type="button" onClick={listing.reload} disabled={listing.loading}>
          Refresh
        </button>
      </form>
      <ErrorBanner error={listing.error} />
      <ErrorBanner error={error} />
      {notice ? (
        <p role="status" className="muted">
          {notice}
        </p>
      ) : null}
      <div className="table-wrap">
        <table className="files-table" aria-label={`Files in ${shown}`}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Size</th>
              <th scope="col">Modified</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {entries.map((entry) => (
              <FileRow key={entry.path} entry={entry} busy={busy} actions={actions} />
            ))}
          </tbody>
        </table>
        {listing.data && entries.length === 0 ? <p className="muted">This folder is empty.</p> : null}
        {listing.data?.truncated ? <p className="muted">Only the first {entries.length} entries are shown.</p> : null}
      </div>
      <form className="row file-form" onSubmit={makeFolder}>
        <label htmlFor="folder">New folder</label>
        <input id="folder" name="folder" required placeholder="name" />
        <button type="submit" disabled={busy}>
          Create folder
        </button>
      </form>
      <form className="row file-form" onSubmit={upload}>
        <label htmlFor="file">Upload to this directory</label>
        <input id="file" name="file" type="file" multiple required />
        <button type="submit" disabled={busy}>
          Upload
        </button>
      </form>
    </section>
  );
}
