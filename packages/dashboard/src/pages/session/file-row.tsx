/** One entry of the Files panel: open (a directory), download (a file), rename in place, delete. */
import { useState } from 'react';
import type { FileEntry } from '../../api.ts';
import { formatBytes, formatTime } from '../../ui.tsx';

export interface FileRowActions {
  open(path: string): void;
  download(entry: FileEntry): void;
  /** Resolves true when the rename went through (the form closes). */
  rename(entry: FileEntry, newName: string): Promise<boolean>;
  remove(entry: FileEntry): void;
}

function typeOf(entry: FileEntry): string {
  if (entry.type === 'symlink') return entry.symlink_target ? `symlink → ${entry.symlink_target}` : 'symlink';
  return entry.type;
}

export function FileRow({ entry, busy, actions }: { entry: FileEntry; busy: boolean; actions: FileRowActions }) {
  const [renaming, setRenaming] = useState(false);
  const directory = entry.type === 'directory';
  return (
    <tr data-file-name={entry.name}>
      <td>
        {renaming ? (
          <form
            className="row"
            onSubmit={(event) => {
              event.preventDefault();
              const name = String(new FormData(event.currentTarget).get('name') ?? '').trim();
              if (name === '' || name === entry.name) return setRenaming(false);
              void actions.rename(entry, name).then((done) => done && setRenaming(false));
            }}
          >
            <label className="visually-hidden" htmlFor={`rename-${entry.path}`}>
              New name for {entry.name}
            </label>
            <input id={`rename-${entry.path}`} name="name" defaultValue={entry.name} required autoFocus />
            <button type="submit" disabled={busy}>
              Save
            </button>
            <button type="button" onClick={() => setRenaming(false)}>
              Cancel
            </button>
          </form>
        ) : directory ? (
          <button type="button" className="link" onClick={() => actions.open(entry.path)} aria-label={`Open ${entry.name}`}>
            {entry.name}/
          </button>
        ) : (
          entry.name
        )}
      </td>
      <td>{typeOf(entry)}</td>
      <td>{entry.type === 'file' ? formatBytes(entry.size) : '—'}</td>
      <td>{formatTime(entry.modified_at)}</td>
      <td className="row">
        {entry.type === 'file' ? (
          <button type="button" onClick={() => actions.download(entry)} aria-label={`Download ${entry.name}`}>
            Download
          </button>
        ) : null}
        <button type="button" onClick={() => setRenaming(true)} disabled={busy || renaming} aria-label={`Rename ${entry.name}`}>
          Rename
        </button>
        <button type="button" className="danger" onClick={() => actions.remove(entry)} disabled={busy} aria-label={`Delete ${entry.name}`}>
          Delete
        </button>
      </td>
    </tr>
  );
}
