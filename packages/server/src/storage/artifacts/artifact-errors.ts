/**
 * The artifact store's errors, one class with a stable `code`, and the one place that turns whatever an object
 * store threw into one of them (with the retries a failed request gets first).
 */

export type ArtifactErrorCode =
  /** No manifest for that kind and id: the artifact does not exist (or was deleted). */
  | 'ARTIFACT_NOT_FOUND'
  /** A chunk is missing or its bytes do not match their SHA-256, a file does not match its own, or a manifest is unreadable. */
  | 'ARTIFACT_CORRUPT'
  /** The object store did not answer or refused (connection refused, timeout, 5xx, a refused request). */
  | 'OBJECT_STORE_UNAVAILABLE';

export class ArtifactError extends Error {
  override readonly name = 'ArtifactError';

  constructor(
    readonly code: ArtifactErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Error codes of sockets and DNS that mean the store did not answer (worth a retry). */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

interface Failure {
  /** Worth retrying: the store may answer next time. */
  transient: boolean;
  /** How the message says what the store did: "did not answer (connect ECONNREFUSED)". */
  what: string;
}

/** Every error in `error`'s cause chain (AggregateError's members included), outermost first. */
function chain(error: unknown): Error[] {
  const found: Error[] = [];
  const visit = (value: unknown) => {
    if (!(value instanceof Error) || found.includes(value) || found.length > 20) return;
    found.push(value);
    if (value instanceof AggregateError) for (const inner of value.errors) visit(inner);
    visit(value.cause);
  };
  visit(error);
  return found;
}

/** What an object store's error means for the artifact store. */
export function classifyStoreFailure(error: unknown): Failure {
  const errors = chain(error);
  for (const e of errors) {
    const { code, syscall } = e as NodeJS.ErrnoException;
    if (code && NETWORK_CODES.has(code)) return { transient: true, what: `did not answer (${[syscall, code].filter(Boolean).join(' ')})` };
    if (e.name === 'TimeoutError' || e.name === 'RequestTimeout') return { transient: true, what: `did not answer (timed out: ${e.message})` };
  }
  for (const e of errors) {
    const status = (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
    if (status !== undefined && status >= 500) return { transient: true, what: `failed with HTTP ${status} (${e.name})` };
    if (status !== undefined && status >= 400) return { transient: false, what: `refused the request (HTTP ${status} ${e.name}: ${e.message})` };
  }
  // The store's own wrapping (e.g. "S3 PutObject … on …: …") repeats the store's name: say the innermost error.
  const innermost = errors.at(-1);
  return { transient: false, what: `failed (${innermost ? `${innermost.message}` : String(error)})` };
}

export interface RetryOptions {
  /** Pauses before the second and third attempts (ms); their count is the number of retries. */
  delaysMs: readonly number[];
  signal?: AbortSignal;
}

/**
 * Runs one object store request; a transient failure is retried after each of `delaysMs`, and what still fails
 * becomes `OBJECT_STORE_UNAVAILABLE`: "<doing>: the object store <description> did not answer (…)". An
 * `ArtifactError` or an abort passes through as it is.
 */
export async function callStore<T>(storeDescription: string, doing: string, request: () => Promise<T>, options: RetryOptions): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    options.signal?.throwIfAborted();
    try {
      return await request();
    } catch (error) {
      if (error instanceof ArtifactError || options.signal?.aborted) throw error;
      const failure = classifyStoreFailure(error);
      if (!failure.transient || attempt >= options.delaysMs.length) {
        throw new ArtifactError('OBJECT_STORE_UNAVAILABLE', `${doing}: the object store ${storeDescription} ${failure.what}`, { cause: error });
      }
      await sleep(options.delaysMs[attempt]!, options.signal);
    }
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(done, ms);
    function done() {
      signal?.removeEventListener('abort', aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', aborted, { once: true });
  });
}
