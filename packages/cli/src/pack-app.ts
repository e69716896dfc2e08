/**
 * An app's folder as the gzipped tar `sandbox deploy` uploads: written by node-tar (no system `tar` needed), with
 * what the SDK's matcher leaves out (`.git`, `node_modules`, `__pycache__`, the folder's `.sandboxdignore`), so the
 * CLI and the SDK's `apps.deploy(folderPath)` send the same files.
 */
import fs from 'node:fs';
import path from 'node:path';
import { APP_IGNORE_FILE, APP_MANIFEST_FILES, appIgnoreMatcher } from '@sandboxd/sdk';
import { create } from 'tar';
import { UsageError } from './errors.ts';

export interface PackedApp {
  tarball: Buffer;
  /** Files, directories and links in it. */
  entries: number;
}

/** The manifest's file name and text, or a usage error that says how to write one. */
export function readManifest(folder: string): { file: string; text: string } {
  for (const file of APP_MANIFEST_FILES) {
    const at = path.join(folder, file);
    if (fs.existsSync(at)) return { file, text: fs.readFileSync(at, 'utf8') };
  }
  throw new UsageError(`no sandboxd.yaml in ${folder}: an app needs a manifest at its root with at least \`port:\` and \`start:\` (docs/guides/apps.md)`);
}

export async function packApp(folder: string): Promise<PackedApp> {
  const ignoreFile = path.join(folder, APP_IGNORE_FILE);
  const ignored = appIgnoreMatcher(fs.existsSync(ignoreFile) ? fs.readFileSync(ignoreFile, 'utf8') : '');
  // The top level by name (no "./" before every path in the archive), what is below through the filter.
  const top = fs
    .readdirSync(folder, { withFileTypes: true })
    .filter((entry) => !ignored(entry.name, entry.isDirectory()))
    .map((entry) => entry.name)
    .sort();
  let entries = 0;
  const chunks: Buffer[] = [];
  const stream = create(
    {
      gzip: true,
      cwd: folder,
      portable: true,
      filter: (entryPath, stat) => {
        const keep = !ignored(entryPath.replace(/\\/g, '/'), 'isDirectory' in stat && typeof stat.isDirectory === 'function' && stat.isDirectory());
        if (keep) entries += 1;
        return keep;
      },
    },
    top,
  );
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return { tarball: Buffer.concat(chunks), entries };
}
