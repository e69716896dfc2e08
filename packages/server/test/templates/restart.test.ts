/**
 * Template builds a server process did not finish, with a real server process on one data directory and a
 * "registry" on loopback that accepts connections and never answers (so a build waits in its first step for as
 * long as the test likes, without a VM): a server SIGKILLed during a build fails it at its next start, naming the
 * step, with its `template.build.failed` event; a graceful stop fails the build it cuts off the same way, and the
 * one waiting in the queue; a user's third build at once is refused (429).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openDatabase } from '../../src/store/database.ts';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { adminApi, startServerProcess, type RunningServer } from '../helpers/processes.ts';
import { waitUntil } from '../helpers/wait.ts';

test('a crash or a stop during a build fails it, saying the server stopped and in which step', { timeout: 300_000 }, async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-template-restart-'));
  // Two silent registries: the builds before the crash reach the first, those after it the second. The crashed
  // server's skopeo outlives it (a SIGKILL reaches only the server) and retries on its own schedule; its new
  // connections must not be taken for the next build's.
  const silentRegistry = async () => {
    const sockets = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { server, sockets, host: `127.0.0.1:${(server.address() as net.AddressInfo).port}` };
  };
  const beforeCrash = await silentRegistry();
  const afterCrash = await silentRegistry();
  const env = {
    SANDBOXD_DATA_DIR: dataDir,
    SANDBOXD_POOL_SIZE: '0',
    SANDBOXD_WARM_VCPUS: '1',
    SANDBOXD_LOG_LEVEL: 'info',
    SANDBOXD_TEMPLATE_INSECURE_REGISTRIES: `${beforeCrash.host},${afterCrash.host}`,
  };
  let server: RunningServer | undefined;
  try {
    server = await startServerProcess(env);
    const api = adminApi(dataDir, () => server!.baseUrl);
    /** Starts a build and resolves once its tool is connected to the silent registry (the build is in `resolve`). */
    const startBuild = async (name: string, registry: { host: string; sockets: Set<net.Socket> }) => {
      const connected = registry.sockets.size;
      const created = await api('POST', '/v1/templates', { name, oci_image: `${registry.host}/team/app:1` });
      assert.equal(created.status, 202, JSON.stringify(created.body));
      await waitUntil(`the build of ${name} to reach the registry`, async () => registry.sockets.size > connected, 60_000, 50);
      return created.body.template_id as string;
    };

    const crashed = await startBuild('cut-off-by-a-crash', beforeCrash);
    server.process.kill('SIGKILL');
    await new Promise((resolve) => server!.process.once('exit', resolve));
    server = await startServerProcess(env);
    const restarted = (await api('GET', `/v1/templates/${crashed}`)).body;
    assert.equal(restarted.status, 'failed', `right after the restart: ${JSON.stringify(restarted)}`);
    assert.equal(restarted.progress.step, 'resolve');
    assert.match(restarted.error, /the server stopped during the build \(step resolve\): build the template again/);

    const stopped = await startBuild('cut-off-by-a-stop', afterCrash);
    // Builds run one at a time: this one waits in the queue. A third is over the user's limit (default 2).
    const queued = await api('POST', '/v1/templates', { name: 'queued', oci_image: `${afterCrash.host}/team/app:2` });
    assert.equal(queued.status, 202, JSON.stringify(queued.body));
    const tooMany = await api('POST', '/v1/templates', { name: 'one-too-many', oci_image: `${afterCrash.host}/team/app:3` });
    assert.equal(tooMany.status, 429, JSON.stringify(tooMany.body));
    assert.equal(tooMany.body.code, 'QUOTA_EXCEEDED');
    assert.match(tooMany.body.detail, /2 template builds under way or queued \(at most 2\)/);
    assert.equal(await server.stop(), 0);
    server = undefined;
    const database = await openDatabase({ dataDir, databaseUrl: null });
    try {
      const row = await database.db.selectFrom('templates').selectAll().where('id', '=', stopped).executeTakeFirstOrThrow();
      assert.equal(row.status, 'failed');
      assert.match(row.error ?? '', /the server stopped during the build \(step resolve\)/);
      const waiting = await database.db.selectFrom('templates').selectAll().where('id', '=', queued.body.template_id).executeTakeFirstOrThrow();
      assert.equal(waiting.status, 'failed');
      assert.match(waiting.error ?? '', /the server stopped before the build started/);
      const failures = (await listEventsAfter(database.db, 0, 10_000))
        .filter((event) => event.type === 'template.build.failed')
        .map((event) => event.data.template_id);
      assert.deepEqual(failures.sort(), [crashed, stopped, queued.body.template_id].sort(), 'one template.build.failed event each');
    } finally {
      await database.close();
    }
  } catch (error) {
    if (!server) throw error;
    console.error(`--- server output ---\n${server.output()}`);
    // The run's closing summary shows the first lines of each failure: the server's last words go with it.
    const lastLines = server.output().trim().split('\n').slice(-4).join('\n');
    throw new Error(`${(error as Error).message.split('\n')[0]}\n--- the server's last lines ---\n${lastLines}`, { cause: error });
  } finally {
    if (server) {
      server.process.kill('SIGKILL');
      await new Promise((resolve) => server!.process.once('exit', resolve));
    }
    for (const registry of [beforeCrash, afterCrash]) {
      for (const socket of registry.sockets) socket.destroy();
      registry.server.close();
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
