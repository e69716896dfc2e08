/** What every command works with: the client for the chosen server and key, and the output. */
import { DEFAULT_BASE_URL, Sandboxd } from '@sandboxd/sdk';
import { currentSession, defaultServerUrl, loadLogin, normalizeUrl, rememberSession, type StoredLogin } from './credentials.ts';
import { createOutput, type Output } from './output.ts';
import { UsageError } from './errors.ts';
import { CLI_VERSION } from './version.ts';

export interface GlobalOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
  /** `--progress` (true), `--no-progress` (false), or neither. */
  progress?: boolean;
}

export type KeySource = '--api-key' | 'SANDBOXD_API_KEY' | 'credentials' | null;

export interface Context {
  client: Sandboxd;
  baseUrl: string;
  keySource: KeySource;
  /** The stored login for this server, when the key comes from it. */
  login: StoredLogin | null;
  out: Output;
  /** The session given with --session, else the current one of this server, else null. */
  sessionOr(given: string | undefined): string | null;
  /** Like sessionOr, but a usage error when there is none. */
  requireSession(given: string | undefined): string;
  remember(sessionId: string): void;
}

/** Server: --url, SANDBOXD_URL, the last `sandbox login`, the default. Key: --api-key, SANDBOXD_API_KEY, the stored login of that server. */
export function createContext(options: GlobalOptions): Context {
  const env = process.env;
  const baseUrl = normalizeUrl(options.url || env.SANDBOXD_URL || defaultServerUrl() || DEFAULT_BASE_URL);
  const stored = loadLogin(baseUrl);
  const [apiKey, keySource]: [string | undefined, KeySource] = options.apiKey
    ? [options.apiKey, '--api-key']
    : env.SANDBOXD_API_KEY
      ? [env.SANDBOXD_API_KEY, 'SANDBOXD_API_KEY']
      : stored
        ? [stored.api_key, 'credentials']
        : [undefined, null];
  const client = new Sandboxd({
    baseUrl,
    // An empty string keeps the SDK from falling back to SANDBOXD_API_KEY on its own.
    apiKey: apiKey ?? '',
    headers: { 'user-agent': `sandbox-cli/${CLI_VERSION}` },
  });
  return {
    client,
    baseUrl,
    keySource,
    login: keySource === 'credentials' ? stored : null,
    out: createOutput(Boolean(options.json), options.progress),
    sessionOr: (given) => given ?? currentSession(baseUrl),
    requireSession(given) {
      const id = given ?? currentSession(baseUrl);
      if (!id) throw new UsageError('no session: pass --session ID, or create one with `sandbox create`');
      return id;
    },
    remember: (sessionId) => rememberSession(baseUrl, sessionId),
  };
}
