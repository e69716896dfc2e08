/** The client: `new Sandboxd({ apiKey, baseUrl })`, with one property per area of the API. */
import { nodeStreamFetch } from './node-request.ts';
import type { ExecuteResult } from './api-types.ts';
import { readEnv } from './env.ts';
import { ApiKeys } from './resources/api-keys.ts';
import { Apps } from './resources/apps.ts';
import { SshKeys } from './resources/ssh-keys.ts';
import { Audit } from './resources/audit.ts';
import { Egress } from './resources/egress.ts';
import { Admin } from './resources/admin.ts';
import { Usage } from './resources/usage.ts';
import { Vaults } from './resources/vaults.ts';
import { Browser } from './resources/browser.ts';
import { ComputerUse } from './resources/computer-use.ts';
import { Auth } from './resources/auth.ts';
import { CliAuth } from './resources/cli-auth.ts';
import { CustomDomains } from './resources/custom-domains.ts';
import { Events } from './resources/events.ts';
import { Execution, type ExecuteOptions } from './resources/execution.ts';
import { Executions, type AsyncExecution } from './resources/executions.ts';
import { Files } from './resources/files.ts';
import { Processes } from './resources/processes.ts';
import { Contexts } from './resources/contexts.ts';
import { Sandboxes } from './resources/sandboxes.ts';
import { Sessions } from './resources/sessions.ts';
import { Shares } from './resources/shares.ts';
import { Templates } from './resources/templates.ts';
import { Terminals } from './resources/terminals.ts';
import { Vms } from './resources/vms.ts';
import { Snapshots } from './resources/snapshots.ts';
import { Volumes } from './resources/volumes.ts';
import { Networks } from './resources/networks.ts';
import { Webhooks } from './resources/webhooks.ts';
import { Transport } from './transport.ts';
import type { CallOptions } from './call-options.ts';

export interface SandboxdOptions {
  /** API key, sent as `X-API-Key` on every request. Default: the `SANDBOXD_API_KEY` environment variable. */
  apiKey?: string;
  /** A bearer token from `POST /v1/auth/token`, used when there is no API key. */
  accessToken?: string;
  /** Default: `SANDBOXD_URL`, else http://127.0.0.1:8080. */
  baseUrl?: string;
  /** Milliseconds each attempt of a request may take (default 300000). Execute allows its own wait on top. */
  timeout?: number;
  /** Retries of what is safe to retry (default 3): connection failures, 429 rate limits, and 502/503/504 of idempotent requests. */
  maxRetries?: number;
  /**
   * Milliseconds before the first retry (default 1000), doubling each time; each wait is a random 50–100 % of that (jitter),
   * and `Retry-After` wins when the server sends it.
   */
  retryDelay?: number;
  /** Another fetch implementation (tests, proxies). */
  fetch?: typeof fetch;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
}

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_RETRY_DELAY_MS = 1000;

function nonNegative(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`${name} must be a number ≥ 0, got ${value}`);
  return value;
}

export class Sandboxd {
  readonly baseUrl: string;
  /** Milliseconds per attempt. */
  readonly timeout: number;
  readonly maxRetries: number;
  /** Milliseconds before the first retry. */
  readonly retryDelay: number;

  readonly sessions: Sessions;
  readonly executions: Executions;
  readonly files: Files;
  /** Background processes in sessions' VMs: start, follow output, stdin, signals, kill. */
  readonly processes: Processes;
  /** Python contexts of sessions: interpreters of their own in a session's VM (`execute(code, { contextId })`). */
  readonly contexts: Contexts;
  readonly sandboxes: Sandboxes;
  readonly vms: Vms;
  readonly snapshots: Snapshots;
  /** Persistent volumes. */
  readonly volumes: Volumes;
  /** Private networks between your VMs. */
  readonly networks: Networks;
  /** Apps: folders deployed as services at their own URLs, versioned (deploy, redeploy, rollback). */
  readonly apps: Apps;
  readonly apiKeys: ApiKeys;
  /** SSH public keys (logins through the SSH gateway) and the gateway's address. */
  readonly sshKeys: SshKeys;
  readonly auth: Auth;
  readonly cliAuth: CliAuth;
  readonly webhooks: Webhooks;
  readonly audit: Audit;
  /** Egress policies of VMs and sessions, and VMs' egress logs. */
  readonly egress: Egress;
  /** Vaults: secrets VMs use without holding them (swapped in on the way out to the hosts they are bound to). */
  readonly vaults: Vaults;
  /** Your usage per day. */
  readonly usage: Usage;
  /** Users, plans and nodes (administrators only). */
  readonly admin: Admin;
  readonly events: Events;
  readonly shares: Shares;
  readonly customDomains: CustomDomains;
  readonly terminals: Terminals;
  /** Templates built from OCI images: VMs start from them by name. */
  readonly templates: Templates;
  /** Browser automation: sessions driven by interactions, one-shot renders, usage, stored credentials. */
  readonly browser: Browser;
  /** Desktop sessions: actions, screenshots, the viewer, recordings. */
  readonly computerUse: ComputerUse;

  /** The HTTP layer, for operations the client has no method for: `client.transport.call('/healthz', 'get')`. */
  readonly transport: Transport;
  private readonly execution: Execution;

  constructor(options: SandboxdOptions = {}) {
    const apiKey = options.apiKey ?? readEnv('SANDBOXD_API_KEY');
    this.baseUrl = (options.baseUrl ?? readEnv('SANDBOXD_URL') ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    try {
      new URL(this.baseUrl);
    } catch {
      throw new TypeError(`baseUrl must be an absolute http(s) URL, got "${this.baseUrl}"`);
    }
    this.timeout = nonNegative('timeout', options.timeout, DEFAULT_TIMEOUT_MS);
    this.maxRetries = Math.floor(nonNegative('maxRetries', options.maxRetries, DEFAULT_MAX_RETRIES));
    this.retryDelay = nonNegative('retryDelay', options.retryDelay, DEFAULT_RETRY_DELAY_MS);
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (typeof fetchImpl !== 'function') throw new TypeError('no fetch: use Node.js 18+ or pass options.fetch');
    this.transport = new Transport({
      baseUrl: this.baseUrl,
      apiKey,
      accessToken: options.accessToken,
      timeout: this.timeout,
      maxRetries: this.maxRetries,
      retryDelay: this.retryDelay,
      fetch: (input, init) => fetchImpl(input, init),
      // With the runtime's own fetch in Node.js, large uploads go through node:http instead (`node-request.ts`); a
      // fetch of the caller's is used for everything.
      ...(options.fetch ? {} : { streamFetch: nodeStreamFetch() }),
      headers: options.headers ?? {},
    });
    this.executions = new Executions(this.transport);
    this.execution = new Execution(this.transport, this.executions);
    this.files = new Files(this.transport);
    this.processes = new Processes(this.transport);
    this.contexts = new Contexts(this.transport);
    this.sessions = new Sessions(this.transport, this);
    this.sandboxes = new Sandboxes(this.transport);
    this.vms = new Vms(this.transport);
    this.egress = new Egress(this.transport);
    this.vaults = new Vaults(this.transport);
    this.snapshots = new Snapshots(this.transport);
    this.volumes = new Volumes(this.transport);
    this.networks = new Networks(this.transport);
    this.apps = new Apps(this.transport);
    this.apiKeys = new ApiKeys(this.transport);
    this.sshKeys = new SshKeys(this.transport);
    this.auth = new Auth(this.transport);
    this.cliAuth = new CliAuth(this.transport);
    this.webhooks = new Webhooks(this.transport);
    this.audit = new Audit(this.transport);
    this.usage = new Usage(this.transport);
    this.admin = new Admin(this.transport);
    this.events = new Events(this.transport);
    this.shares = new Shares(this.transport);
    this.customDomains = new CustomDomains(this.transport);
    this.terminals = new Terminals(this.transport);
    this.templates = new Templates(this.transport);
    this.browser = new Browser(this.transport);
    this.computerUse = new ComputerUse(this.transport, this.sessions);
  }

  /** True when an API key or token is configured (it may still be wrong). */
  get hasCredentials(): boolean {
    return Boolean(this.transport.settings.apiKey || this.transport.settings.accessToken);
  }

  /**
   * Runs code and waits. Without `sessionId` the server makes a new session (its id is in the answer);
   * prefer `client.sessions.create()` and `session.execute()` to keep state between calls.
   */
  execute(code: string, options: ExecuteOptions & { sessionId?: string | null } = {}): Promise<ExecuteResult> {
    return this.execution.execute(code, options.sessionId ?? null, options);
  }

  /** Starts a run and returns at once; `await run.wait()` polls its record once a second. */
  executeAsync(code: string, options: Omit<ExecuteOptions, 'throwOnError'> & { sessionId?: string | null } = {}): Promise<AsyncExecution> {
    return this.execution.executeAsync(code, options.sessionId ?? null, options);
  }

  /** GET /healthz: the server is up. */
  async health(options: CallOptions = {}): Promise<unknown> {
    return this.transport.request('GET', '/healthz', { anonymous: true, signal: options.signal });
  }
}
