/**
 * The command-line login (device authorization bound with PKCE): `start` (no credentials), `approve` (as
 * a signed-in user), `exchange` (no credentials; the API key, once), and `waitForKey`, which polls the
 * exchange at the server's interval until the user approves, denies, or the login expires.
 */
import type { CliAuthApproveResponse, CliAuthExchangeResponse, CliAuthStartResponse } from '../api-types.ts';
import { SandboxdError } from '../errors.ts';
import type { CallOptions } from '../call-options.ts';
import type { Transport } from '../transport.ts';

export interface CliAuthPollOptions extends CallOptions {
  deviceCode: string;
  codeVerifier: string;
  /** Seconds between polls, from `start` (the server's `slow_down` answers make it longer). */
  interval: number;
  /** Seconds until the login expires, from `start`; polling stops then. */
  expiresIn?: number;
  /** Called before each wait, e.g. for a spinner. */
  onPending?: (info: { intervalSeconds: number; polls: number }) => void;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export class CliAuth {
  constructor(private readonly transport: Transport) {}

  /** Starts a login; show `user_code` and open `verification_uri_complete`. */
  async start(input: { hostname: string; codeChallenge: string }, options: CallOptions = {}): Promise<CliAuthStartResponse> {
    return this.transport.call('/api/cli-auth/start', 'post', {
      json: { hostname: input.hostname, code_challenge: input.codeChallenge, code_challenge_method: 'S256' },
      anonymous: true,
      signal: options.signal,
    });
  }

  /** Approves (or with `deny: true` denies) the login with this user code, as the client's user. */
  async approve(userCode: string, options: { deny?: boolean } & CallOptions = {}): Promise<CliAuthApproveResponse> {
    return this.transport.call('/api/cli-auth/approve', 'post', {
      json: { user_code: userCode, ...(options.deny ? { deny: true } : {}) },
      signal: options.signal,
    });
  }

  /** One exchange: the key when approved; otherwise a SandboxdError whose `code` says why (CLI_AUTH_PENDING…). */
  async exchange(input: { deviceCode: string; codeVerifier: string }, options: CallOptions = {}): Promise<CliAuthExchangeResponse> {
    return this.transport.call('/api/cli-auth/exchange', 'post', {
      json: { device_code: input.deviceCode, code_verifier: input.codeVerifier },
      anonymous: true,
      signal: options.signal,
      // A lost answer cannot be asked for again (the key is handed out once): never resend.
      idempotent: false,
    });
  }

  /** Polls the exchange until it answers the key, or a final error (denied, expired, used, wrong verifier). */
  async waitForKey(options: CliAuthPollOptions): Promise<CliAuthExchangeResponse> {
    let intervalSeconds = Math.max(1, options.interval);
    const deadline = options.expiresIn === undefined ? Infinity : Date.now() + options.expiresIn * 1000;
    for (let polls = 0; ; polls++) {
      options.onPending?.({ intervalSeconds, polls });
      await sleep(intervalSeconds * 1000, options.signal);
      try {
        return await this.exchange(options, { signal: options.signal });
      } catch (error) {
        if (!(error instanceof SandboxdError)) throw error;
        if (error.code === 'CLI_AUTH_SLOW_DOWN') {
          const interval = (error.body as { interval?: unknown } | undefined)?.interval;
          intervalSeconds = typeof interval === 'number' ? interval : intervalSeconds + 5;
        } else if (error.code !== 'CLI_AUTH_PENDING') {
          throw error;
        }
        if (Date.now() + intervalSeconds * 1000 > deadline) {
          throw new SandboxdError('the login expired before it was approved; start again', { code: 'CLI_AUTH_EXPIRED' });
        }
      }
    }
  }
}
