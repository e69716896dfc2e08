/**
 * What of an app's folder is deployed: everything but `.git`, `node_modules`, `__pycache__` and what the folder's
 * `.sandboxdignore` lists (gitignore's pattern language, without its escapes: `#` comments, `!` re-includes, a
 * trailing `/` matches directories only, a `/` elsewhere anchors the pattern at the folder, `*`, `?`, `[…]` and `**`).
 * The matcher is plain code (the CLI packs with it too); `packAppFolder` is Node.js only and packs with the system's
 * `tar`, its modules loaded at run time so that browser bundles leave them out (as `node-request.ts` does).
 */

/** Left out of every deployment, at any depth. */
export const ALWAYS_IGNORED = ['.git', 'node_modules', '__pycache__'] as const;

/** The ignore file read at the folder's root. */
export const APP_IGNORE_FILE = '.sandboxdignore';

/** The manifest's names, in the order they are looked for. */
export const APP_MANIFEST_FILES = ['sandboxd.yaml', 'sandboxd.yml', 'instavm.yaml', 'instavm.yml'] as const;

interface Rule {
  negate: boolean;
  directoryOnly: boolean;
  regex: RegExp;
}

/** A glob of gitignore's language as a regular expression over a relative path (`/`-separated, no leading `/`). */
function globToRegex(glob: string, anchored: boolean): RegExp {
  let source = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` any directories (none too), `/**` everything inside, `**` alone anything.
      if (glob[i + 2] === '/') {
        source += '(?:.*/)?';
        i += 2;
      } else {
        source += '.*';
        i += 1;
      }
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end === -1) source += '\\[';
      else {
        const inside = glob
          .slice(i + 1, end)
          .replace(/^!/, '^')
          .replace(/\\/g, '\\\\');
        source += `[${inside}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  // Unanchored patterns match at any depth; a match of a directory covers what is inside it (the walk skips it).
  return new RegExp(`^${anchored ? '' : '(?:.*/)?'}${source}$`);
}

function parseRules(text: string): Rule[] {
  const rules: Rule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/\s+$/, '');
    if (line === '' || line.startsWith('#')) continue;
    const negate = line.startsWith('!');
    if (negate) line = line.slice(1);
    const directoryOnly = line.endsWith('/');
    if (directoryOnly) line = line.replace(/\/+$/, '');
    const anchored = line.includes('/');
    line = line.replace(/^\/+/, '');
    if (line === '') continue;
    rules.push({ negate, directoryOnly, regex: globToRegex(line, anchored) });
  }
  return rules;
}

/**
 * `(relativePath, isDirectory) → left out?` for the rules of an ignore file's `text` (empty: the fixed ones only).
 * Paths are relative to the folder, `/`-separated; a directory left out is never walked into.
 */
export function appIgnoreMatcher(text = ''): (relativePath: string, isDirectory: boolean) => boolean {
  const rules = parseRules(text);
  return (relativePath, isDirectory) => {
    const path = relativePath.replace(/^\.\//, '').replace(/\/+$/, '');
    const base = path.slice(path.lastIndexOf('/') + 1);
    if ((ALWAYS_IGNORED as readonly string[]).includes(base)) return true;
    let ignored = false;
    for (const rule of rules) {
      if (rule.directoryOnly && !isDirectory) continue;
      if (rule.regex.test(path)) ignored = !rule.negate;
    }
    return ignored;
  };
}

/** The `name:` at the top level of a manifest's text, when it has one (the server reads the rest). */
export function manifestName(text: string): string | undefined {
  const match = /^name:[ \t]*(?:"([^"]*)"|'([^']*)'|([^\s#]+))/m.exec(text);
  const name = match?.[1] ?? match?.[2] ?? match?.[3];
  return name === undefined || name === '' ? undefined : name;
}

/** An app name made of a folder's name: lower case, `[a-z0-9-]`, at most 40 characters. */
export function appNameOfFolder(folderName: string): string {
  return (
    folderName
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40)
      .replace(/-+$/, '') || 'app'
  );
}

// The few Node.js interfaces used below (the SDK's types have no Node.js).
interface Dirent {
  name: string;
  isDirectory(): boolean;
}
interface NodeFs {
  readdir(path: string, options: { withFileTypes: true }): Promise<Dirent[]>;
  readFile(path: string, encoding: 'utf8'): Promise<string>;
}
interface ChildProcess {
  stdin: { end(data: string): void };
  stdout: { on(event: 'data', listener: (chunk: Uint8Array) => void): void };
  stderr: { on(event: 'data', listener: (chunk: Uint8Array) => void): void };
  on(event: 'error', listener: (error: Error) => void): void;
  on(event: 'close', listener: (code: number | null) => void): void;
}
interface NodeChildProcess {
  spawn(command: string, args: string[], options: { stdio: ['pipe', 'pipe', 'pipe'] }): ChildProcess;
}

const load = (name: string) => import(/* @vite-ignore */ name) as Promise<unknown>;

/** A folder's files and directories to deploy, relative, `/`-separated, parents before what they hold. */
export async function listAppFolder(folder: string): Promise<string[]> {
  const fs = (await load('node:fs/promises')) as NodeFs;
  const ignoreText = await fs.readFile(`${folder}/${APP_IGNORE_FILE}`, 'utf8').catch(() => '');
  const ignored = appIgnoreMatcher(ignoreText);
  const found: string[] = [];
  const walk = async (relative: string): Promise<void> => {
    const entries = await fs.readdir(relative ? `${folder}/${relative}` : folder, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const path = relative ? `${relative}/${entry.name}` : entry.name;
      if (ignored(path, entry.isDirectory())) continue;
      found.push(path);
      if (entry.isDirectory()) await walk(path);
    }
  };
  await walk('');
  return found;
}

/**
 * Node.js: the folder as a gzipped tar, the manifest at its root, what `.sandboxdignore` lists left out. The system's
 * `tar` writes it (GNU tar or bsdtar), given the list of paths on its stdin, NUL-separated, so no name is ever read
 * as an option.
 */
export async function packAppFolder(folder: string): Promise<Uint8Array> {
  if (typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node !== 'string') {
    throw new TypeError('deploying a folder by its path works in Node.js only: pass the tarball (a gzipped tar) instead');
  }
  const paths = await listAppFolder(folder);
  const { spawn } = (await load('node:child_process')) as NodeChildProcess;
  return new Promise<Uint8Array>((resolve, reject) => {
    const child = spawn('tar', ['-c', '-z', '-f', '-', '--no-recursion', '-C', folder, '--null', '-T', '-'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Uint8Array[] = [];
    const err: Uint8Array[] = [];
    child.stdout.on('data', (chunk) => out.push(chunk));
    child.stderr.on('data', (chunk) => err.push(chunk));
    child.on('error', (error) => reject(new Error(`cannot run tar to pack ${folder}: ${error.message}`)));
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`tar failed packing ${folder} (exit ${code}): ${new TextDecoder().decode(concat(err)).trim()}`));
      resolve(concat(out));
    });
    child.stdin.end(paths.map((p) => `${p}\0`).join(''));
  });
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.byteLength;
  }
  return all;
}
