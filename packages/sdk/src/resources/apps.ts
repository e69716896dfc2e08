/**
 * Apps: a folder (its `sandboxd.yaml` manifest at the root) deployed as a long-running service at a URL of its own;
 * each deployment is a version, a redeploy or a rollback goes live without downtime.
 */
import type { AppDeploymentAccepted, AppDeploymentRecord, AppRecord } from '../api-types.ts';
import type { CallOptions } from '../call-options.ts';
import { packAppFolder } from '../app-folder.ts';
import { sleep, type Transport } from '../transport.ts';

/**
 * What `deploy` takes: the tarball (a gzipped tar of the folder, the manifest at its root) as bytes, a Blob, a web
 * stream or an async iterable of chunks (a Node.js stream); or, in Node.js, the folder's path as a string.
 */
export type AppSource = Uint8Array | ArrayBuffer | Blob | ReadableStream<Uint8Array> | AsyncIterable<Uint8Array> | string;

export interface AppDeployOptions extends CallOptions {
  /** The app's name when the manifest has none (default: the manifest's `name`). */
  name?: string;
}

export interface AppLogOptions extends CallOptions {
  /** Keep reading until the deployment is over (a deployment's log) or the caller stops (the app's log). */
  follow?: boolean;
}

export interface AppWaitOptions extends CallOptions {
  /** Each line of the deployment's log, as it arrives. */
  onLine?: (line: string) => void;
}

/** Statuses after which a deployment changes no more. */
const OVER = new Set(['live', 'failed', 'stopped', 'superseded']);
/** Above this size a tarball goes through node:http in Node.js (whose fetch would hold it whole twice). */
const STREAM_ABOVE_BYTES = 4 * 2 ** 20;

async function toBlob(source: Exclude<AppSource, string>): Promise<Blob> {
  if (source instanceof Blob) return source;
  if (source instanceof ArrayBuffer) return new Blob([new Uint8Array(source).slice()]);
  if (source instanceof Uint8Array) return new Blob([source.slice()]);
  if (typeof (source as ReadableStream<Uint8Array>).getReader === 'function') return new Response(source as ReadableStream<Uint8Array>).blob();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  for await (const chunk of source as AsyncIterable<Uint8Array>) chunks.push(new Uint8Array(chunk));
  return new Blob(chunks);
}

/** The lines of a text answer as they arrive (the last one even without its newline). */
async function* linesOf(response: Response): AsyncGenerator<string> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let pending = '';
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      pending += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = pending.indexOf('\n')) !== -1) {
        yield pending.slice(0, newline);
        pending = pending.slice(newline + 1);
      }
    }
    pending += decoder.decode();
    if (pending !== '') yield pending;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/** A text answer of `path` line by line (`follow`: kept open as long as there is something to wait for). */
async function* textLines(transport: Transport, path: string, options: AppLogOptions): AsyncGenerator<string> {
  const response = (await transport.request(
    'GET',
    path,
    {
      query: { follow: options.follow ?? false },
      headers: { accept: 'text/plain' },
      ...(options.follow ? { timeout: 2 ** 31 - 1 } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    },
    'stream',
  )) as Response;
  yield* linesOf(response);
}

export class Apps {
  constructor(private readonly transport: Transport) {}

  /**
   * Uploads a folder and deploys it: a new name creates the app, an existing one gets its next version. Answers at
   * once (202) with the app and the deployment under way; `waitForDeployment` follows it.
   */
  async deploy(source: AppSource, options: AppDeployOptions = {}): Promise<AppDeploymentAccepted> {
    const blob = typeof source === 'string' ? new Blob([(await packAppFolder(source)).slice()]) : await toBlob(source);
    const streamed = this.transport.settings.streamFetch !== undefined && blob.size > STREAM_ABOVE_BYTES;
    return (await this.transport.request('POST', '/v1/apps/deployments', {
      query: { name: options.name },
      ...(streamed
        ? { stream: { contentType: 'application/gzip', length: blob.size, open: () => blob.stream() } }
        : { blob: { data: blob, contentType: 'application/gzip' } }),
      // At least 1 MiB/s on top of two minutes for the upload.
      timeout: 120_000 + Math.ceil(blob.size / 2 ** 20) * 1000,
      ...(options.signal ? { signal: options.signal } : {}),
    })) as AppDeploymentAccepted;
  }

  /** Your apps. */
  async list(options: CallOptions = {}): Promise<AppRecord[]> {
    return (await this.transport.call('/v1/apps', 'get', { signal: options.signal })).apps;
  }

  /** An app by its id or its name. */
  get(app: string, options: CallOptions = {}): Promise<AppRecord> {
    return this.transport.call('/v1/apps/{app}', 'get', { params: { app }, signal: options.signal });
  }

  /** Deletes the app: its VMs stop, its URL stops answering at once. */
  async delete(app: string, options: CallOptions = {}): Promise<void> {
    await this.transport.call('/v1/apps/{app}', 'delete', { params: { app }, signal: options.signal });
  }

  /** The app's deployments, newest first. */
  async deployments(app: string, options: CallOptions = {}): Promise<AppDeploymentRecord[]> {
    return (await this.transport.call('/v1/apps/{app}/deployments', 'get', { params: { app }, signal: options.signal })).deployments;
  }

  /** One deployment (a version) of the app. */
  deployment(app: string, version: number, options: CallOptions = {}): Promise<AppDeploymentRecord> {
    return this.transport.call('/v1/apps/{app}/deployments/{version}', 'get', { params: { app, version }, signal: options.signal });
  }

  /**
   * A deployment's log (upload, install, start, health checks, the switch), line by line; with `follow`, until the
   * deployment is live, failed or stopped.
   */
  async *deploymentLogs(app: string, version: number, options: AppLogOptions = {}): AsyncGenerator<string> {
    yield* textLines(this.transport, `/v1/apps/${encodeURIComponent(app)}/deployments/${version}/logs`, options);
  }

  /** The running app's output (its start command's stdout and stderr; `[r1] `… before each line with several replicas). */
  async *logs(app: string, options: AppLogOptions = {}): AsyncGenerator<string> {
    yield* textLines(this.transport, `/v1/apps/${encodeURIComponent(app)}/logs`, options);
  }

  /**
   * Follows a deployment until it is over (live, failed, stopped or superseded) and answers its final record; a log
   * that breaks off is followed on by polling the record.
   */
  async waitForDeployment(app: string, version: number, options: AppWaitOptions = {}): Promise<AppDeploymentRecord> {
    try {
      for await (const line of this.deploymentLogs(app, version, { follow: true, signal: options.signal })) options.onLine?.(line);
    } catch (error) {
      if (options.signal?.aborted) throw error;
    }
    for (;;) {
      const record = await this.deployment(app, version, { signal: options.signal });
      if (OVER.has(record.status)) return record;
      await sleep(1000, options.signal);
    }
  }

  /** Brings back an earlier version (default: the last one live before the current), without downtime. */
  rollback(app: string, options: { version?: number } & CallOptions = {}): Promise<AppDeploymentAccepted> {
    return this.transport.call('/v1/apps/{app}/rollback', 'post', {
      params: { app },
      json: options.version !== undefined ? { version: options.version } : {},
      signal: options.signal,
    });
  }

  /** Starts the live version's VMs again (new VMs take over once healthy). */
  restart(app: string, options: CallOptions = {}): Promise<AppDeploymentAccepted> {
    return this.transport.call('/v1/apps/{app}/restart', 'post', { params: { app }, signal: options.signal });
  }
}
