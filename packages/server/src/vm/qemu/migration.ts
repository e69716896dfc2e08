/**
 * Device state in and out of QEMU (the guest's RAM stays in its memory file: `x-ignore-shared`). QEMU runs
 * with `-sandbox spawn=deny`, so `exec:` URIs are out; QEMU 7.2 has no `file:` URI and its outgoing `fd:`
 * needs an fd passed over QMP with SCM_RIGHTS, which Node cannot send. So: outgoing to a unix socket the
 * driver listens on, incoming from an inherited fd (`fd:3`, given at spawn).
 */
import { createWriteStream } from 'node:fs';
import { chown, open, rename, rm, stat } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { QmpClient } from './qmp-client.ts';

interface MigrationStatus {
  status?: string;
  'error-desc'?: string;
}

const IGNORE_SHARED = { capabilities: [{ capability: 'x-ignore-shared', state: true }] };

/** Polls `query-migrate` until `completed`; rejects on `failed`/`cancelled` or after `timeoutMs`. */
export function waitForMigration(qmp: QmpClient, timeoutMs: number): Promise<void> {
  return waitForMigrationStatus(qmp, 'completed', timeoutMs);
}

/**
 * Polls `query-migrate` until its status is `wanted` (e.g. `pre-switchover`, where a source with
 * `pause-before-switchover` waits for `migrate-continue`); rejects on `failed`/`cancelled` or after `timeoutMs`.
 */
export async function waitForMigrationStatus(qmp: QmpClient, wanted: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const status = await qmp.execute<MigrationStatus>('query-migrate');
    if (status.status === wanted) return;
    if (status.status === 'failed' || status.status === 'cancelled')
      throw new Error(`migration ${status.status}: ${status['error-desc'] ?? 'no reason given (see the QEMU log)'}`);
    if (Date.now() > deadline) throw new Error(`migration not completed within ${timeoutMs} ms (status ${status.status ?? 'none'})`);
    await sleep(5);
  }
}

/**
 * Stops the guest and writes its device state to `statePath` (via a temporary file, renamed when complete
 * and synced). `socketPath` is where QEMU connects; `owner` the user QEMU runs as. The VM stays stopped.
 * Resolves with the state's size in bytes.
 */
export async function saveDeviceState(
  qmp: QmpClient,
  options: { socketPath: string; statePath: string; owner: { uid: number; gid: number } | null; timeoutMs: number },
): Promise<number> {
  const tmpPath = `${options.statePath}.tmp`;
  let server: Server | undefined;
  try {
    const received = new Promise<void>((resolve, reject) => {
      server = createServer({ allowHalfOpen: false }, (socket: Socket) => {
        server?.close(); // exactly one stream
        pipeline(socket, createWriteStream(tmpPath, { mode: 0o640 })).then(resolve, reject);
      });
      server.once('error', reject);
    });
    received.catch(() => undefined); // awaited below; do not let an early failure count as unhandled
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(options.socketPath, () => resolve());
    });
    if (options.owner) await chown(options.socketPath, options.owner.uid, options.owner.gid);
    await qmp.execute('stop');
    await qmp.execute('migrate-set-capabilities', IGNORE_SHARED);
    await qmp.execute('migrate', { uri: `unix:${options.socketPath}` });
    await Promise.all([waitForMigration(qmp, options.timeoutMs), received]);
    const handle = await open(tmpPath, 'r+');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmpPath, options.statePath);
    return (await stat(options.statePath)).size;
  } catch (error) {
    await rm(tmpPath, { force: true });
    throw error;
  } finally {
    server?.close();
    await rm(options.socketPath, { force: true });
  }
}

/** Loads device state from the stream QEMU got as fd 3, for a VM started with `-incoming defer`. Stays paused. */
export async function loadDeviceState(qmp: QmpClient, timeoutMs: number): Promise<void> {
  await qmp.execute('migrate-set-capabilities', IGNORE_SHARED);
  await qmp.execute('migrate-incoming', { uri: 'fd:3' });
  await waitForMigration(qmp, timeoutMs);
}
