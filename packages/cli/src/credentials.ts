/**
 * Where the command line keeps what `sandbox login` got: `$XDG_CONFIG_HOME/sandboxd/credentials.json`
 * (default `~/.config/sandboxd/credentials.json`), mode 0600 in a 0700 directory, one entry per server
 * URL, so a key is only ever sent to the server that issued it. `state.json` next to it remembers the
 * current session per server (not a secret).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface StoredLogin {
  api_key: string;
  api_key_id: number;
  key_prefix: string;
  user_id: number;
  username: string;
  description: string;
  created_at: string;
}

interface CredentialsFile {
  version: 1;
  /** The server `sandbox` talks to when neither --url nor SANDBOXD_URL says otherwise. */
  default_url: string | null;
  servers: Record<string, StoredLogin>;
}

interface StateFile {
  version: 1;
  /** The current session per server URL. */
  sessions: Record<string, string>;
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : path.join(env.HOME || os.homedir(), '.config');
  return path.join(base, 'sandboxd');
}

export const credentialsPath = (env?: NodeJS.ProcessEnv) => path.join(configDir(env), 'credentials.json');
const statePath = (env?: NodeJS.ProcessEnv) => path.join(configDir(env), 'state.json');

/** URLs are compared without a trailing slash. */
export const normalizeUrl = (url: string) => url.replace(/\/+$/, '');

function readJson<T>(file: string, fallback: T): T {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
    throw new Error(`cannot read ${file}: ${(error as Error).message}; fix or delete it`);
  }
}

/** Writes through a temp file and a rename, created with the final mode, so no reader sees half a file or a wider mode. */
function writePrivateJson(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  fs.chmodSync(temp, 0o600);
  fs.renameSync(temp, file);
}

function readCredentials(): CredentialsFile {
  const file = readJson<Partial<CredentialsFile>>(credentialsPath(), {});
  return { version: 1, default_url: file.default_url ?? null, servers: file.servers ?? {} };
}

export function defaultServerUrl(): string | null {
  return readCredentials().default_url;
}

export function loadLogin(url: string): StoredLogin | null {
  return readCredentials().servers[normalizeUrl(url)] ?? null;
}

export function saveLogin(url: string, login: StoredLogin): string {
  const file = readCredentials();
  file.servers[normalizeUrl(url)] = login;
  file.default_url = normalizeUrl(url);
  writePrivateJson(credentialsPath(), file);
  return credentialsPath();
}

/** Forgets the login for `url`; true when there was one. */
export function removeLogin(url: string): boolean {
  const file = readCredentials();
  const key = normalizeUrl(url);
  if (!file.servers[key]) return false;
  delete file.servers[key];
  if (file.default_url === key) file.default_url = Object.keys(file.servers)[0] ?? null;
  writePrivateJson(credentialsPath(), file);
  return true;
}

export function currentSession(url: string): string | null {
  return readJson<Partial<StateFile>>(statePath(), {}).sessions?.[normalizeUrl(url)] ?? null;
}

export function rememberSession(url: string, sessionId: string): void {
  const state = readJson<Partial<StateFile>>(statePath(), {});
  writePrivateJson(statePath(), { version: 1, sessions: { ...state.sessions, [normalizeUrl(url)]: sessionId } });
}
