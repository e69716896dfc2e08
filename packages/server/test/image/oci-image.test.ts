/**
 * OCI images become guest images, end to end with real things: Debian's docker-registry on loopback (one
 * anonymous, one with htpasswd basic authentication), images this test builds itself and pushes with skopeo,
 * `buildOciImage` (skopeo, umoci, the injected runtime, mkfs.ext4), and the real VM driver booting what it made
 * with the real agent. Two cold boots under TCG: the whole file takes two to four minutes.
 */
import { strict as assert } from 'node:assert';
import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { AgentClient } from '../../src/agent/index.ts';
import { layerLockPath } from '../../src/image/cache-layout.ts';
import { defaultCacheDir } from '../../src/image/index.ts';
import {
  buildOciImage,
  OciImageError,
  type BuildOciImageOptions,
  type OciBuildProgress,
  type OciGuestImage,
  type OciImageManifest,
} from '../../src/image/oci/index.ts';
import type { VmInfo } from '../../src/vm/vm-driver.ts';
import { AGENT_BUNDLE, createDriver, scratchDir, testImage, type RecordingDriver } from '../vm/vm-fixture.ts';
import {
  ADDED_FILE,
  ADDED_TEXT,
  addBusyboxImage,
  addDebianImage,
  BUSYBOX_TAG,
  commonBaseTar,
  createLayout,
  DEBIAN_TAG,
  type TestLayout,
} from './oci-image-fixture.ts';
import { pushImage, startRegistry, type TestRegistry } from './registry-fixture.ts';

const CREDENTIALS = { username: 'builder', password: 'correct horse battery staple' };
const BOOT_TIMEOUT_MS = 180_000;

describe('OCI images to guest images', { timeout: 30 * 60_000 }, () => {
  let open: TestRegistry;
  let locked: TestRegistry;
  let layout: TestLayout;
  let driver: RecordingDriver;
  let runRoot: string;
  const built: OciGuestImage[] = [];
  const vms: VmInfo[] = [];

  /** buildOciImage against the test registries, recording the progress; the images are removed after the file. */
  async function build(
    reference: string,
    extra: Partial<BuildOciImageOptions> = {},
  ): Promise<{ image: OciGuestImage; events: OciBuildProgress[]; ms: number }> {
    const events: OciBuildProgress[] = [];
    const started = Date.now();
    const image = await buildOciImage({
      reference,
      insecureRegistries: [open.host, locked.host],
      cacheDir: defaultCacheDir(),
      agentBundlePath: AGENT_BUNDLE,
      onProgress: (event) => events.push(event),
      ...extra,
    });
    built.push(image);
    return { image, events, ms: Date.now() - started };
  }

  async function rejection(promise: Promise<unknown>): Promise<OciImageError> {
    const error = await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof OciImageError, `expected an OciImageError, got ${String(error)}`);
    return error;
  }

  async function boot(t: TestContext, image: OciGuestImage, vmId: string, network: 'user' | 'none'): Promise<AgentClient> {
    const started = Date.now();
    const vm = await driver.driver.boot({ vmId, runDir: join(runRoot, vmId), image, vcpuCount: 1, memoryMb: 512, network, timeoutMs: BOOT_TIMEOUT_MS });
    vms.push(vm);
    t.diagnostic(
      `cold boot to agent: ${Date.now() - started} ms; stages ${JSON.stringify(driver.stages.filter((s) => s.vmId === vmId).map((s) => [s.stage, s.elapsedMs]))}`,
    );
    return AgentClient.connect({ socketPath: vm.agentSocketPath }, { timeoutMs: 30_000 });
  }

  async function shell(client: AgentClient, command: string): Promise<string> {
    const { stdout, stderr, result } = await client.exec({ command, timeoutMs: 60_000 }).collect();
    assert.equal(result.exitCode, 0, `${command}: ${stdout.toString()}${stderr.toString()}`);
    return stdout.toString();
  }

  before(async () => {
    // The kernel layer (and the default image the other tests compare against).
    await testImage();
    [open, locked, layout] = await Promise.all([startRegistry(), startRegistry({ credentials: CREDENTIALS }), createLayout()]);
    driver = createDriver();
    runRoot = await scratchDir('sbx-oci-');
  });

  after(async () => {
    for (const vm of vms) await driver?.driver.kill(vm.vmId);
    await Promise.all([open?.stop(), locked?.stop(), layout?.remove()]);
    if (runRoot) await rm(runRoot, { recursive: true, force: true });
    // Each run's images have digests of their own: remove them and their pulled layouts from the shared cache.
    for (const image of built) {
      const pullHash = basename(dirname(image.layoutDir));
      await Promise.all([
        rm(image.dir, { recursive: true, force: true }),
        rm(dirname(image.layoutDir), { recursive: true, force: true }),
        rm(layerLockPath(defaultCacheDir(), 'oci-image', image.hash), { force: true }),
        rm(layerLockPath(defaultCacheDir(), 'oci-pull', pullHash), { force: true }),
      ]);
    }
  });

  test('a bad reference fails at resolve, before any tool runs', async () => {
    const error = await rejection(build('127.0.0.1:1/Not A Reference'));
    assert.equal(error.code, 'OCI_REFERENCE_INVALID');
    assert.equal(error.step, 'resolve');
    assert.match(error.message, /invalid image reference/);
  });

  test('a tag the registry does not have fails at resolve, saying so', async () => {
    await addBusyboxImage(layout);
    await pushImage(open, layout.dir, BUSYBOX_TAG, 'sandboxd-test/busybox');
    const error = await rejection(build(`${open.host}/sandboxd-test/busybox:no-such-tag`));
    assert.equal(error.code, 'OCI_NOT_FOUND');
    assert.equal(error.step, 'resolve');
    assert.match(error.message, /no such image.*manifest unknown/);
    assert.ok(error.outputTail.length > 0, 'the tool output comes along');
  });

  test('a plain-HTTP registry not listed as insecure fails as unreachable, naming the fix', async () => {
    // Private registries allowed (it is on loopback), but not this one's plain HTTP.
    const error = await rejection(build(`${open.host}/sandboxd-test/busybox:${BUSYBOX_TAG}`, { insecureRegistries: [], allowPrivateRegistries: true }));
    assert.equal(error.code, 'OCI_REGISTRY_UNREACHABLE');
    assert.match(error.message, /insecure registries/);
  });

  test('wrong or missing credentials fail at resolve with an authentication message', async () => {
    await pushImage(locked, layout.dir, BUSYBOX_TAG, 'sandboxd-test/busybox');
    const reference = `${locked.host}/sandboxd-test/busybox:${BUSYBOX_TAG}`;
    for (const credentials of [{ username: CREDENTIALS.username, password: 'wrong' }, undefined]) {
      const error = await rejection(build(reference, credentials ? { credentials } : {}));
      assert.equal(error.code, 'OCI_UNAUTHORIZED', error.message);
      assert.equal(error.step, 'resolve');
      assert.match(error.message, /refused access: check the credentials/);
    }
  });

  test('an aborted build stops with OCI_ABORTED, naming the step', async () => {
    const error = await rejection(build(`${locked.host}/sandboxd-test/busybox:${BUSYBOX_TAG}`, { credentials: CREDENTIALS, signal: AbortSignal.abort() }));
    assert.equal(error.code, 'OCI_ABORTED');
    assert.equal(error.step, 'resolve');
  });

  test('a busybox-only image (no libc, node or python3) boots on the injected runtime', async (t) => {
    const authDirsBefore = await authDirs();
    const { image, events, ms } = await build(`${locked.host}/sandboxd-test/busybox:${BUSYBOX_TAG}`, { credentials: CREDENTIALS });
    t.diagnostic(`built in ${ms} ms: ${stepTimes(events)}`);
    assert.deepEqual(
      events.filter((e) => e.type === 'step-done').map((e) => e.type === 'step-done' && e.step),
      ['resolve', 'pull', 'unpack', 'runtime', 'mkfs'],
    );
    assert.deepEqual(await authDirs(), authDirsBefore, 'the credentials file is gone');
    assert.match(image.digest, /^sha256:[a-f0-9]{64}$/);
    assert.deepEqual(image.kernelArgs, ['sandboxd.init=/opt/sandboxd/guest-init']);
    assert.deepEqual(image.config, { env: { PATH: '/bin', GREETING: 'hello from busybox' }, workingDir: null, user: null, entrypoint: ['/bin/sh'], cmd: [] });
    const manifest = JSON.parse(await readFile(image.manifestPath, 'utf8')) as OciImageManifest;
    assert.equal(manifest.runtime.userPythonSource, 'runtime');
    assert.equal(manifest.runtime.shell, '/bin/sh');

    const client = await boot(t, image, 'oci-busybox', 'user');
    try {
      assert.equal((await client.hello()).vmId, 'oci-busybox');
      // The image's Env reached the user's programs; the shell is the image's own busybox sh; no libc anywhere.
      assert.equal(await shell(client, 'echo "$GREETING|$PATH"'), 'hello from busybox|/bin\n');
      assert.doesNotMatch(await shell(client, 'ls /'), /^(usr|lib|lib64)$/m);
      // guest-init configured the network from the sandboxd.* parameters, and the hostname.
      assert.match(await shell(client, 'ip -4 addr show eth0'), /inet 10\.0\.2\.15\/24/);
      assert.match(await shell(client, 'cat /etc/resolv.conf /etc/hosts'), /nameserver 10\.0\.2\.3[\s\S]*127\.0\.1\.1/);
      // Stateful Python on the runtime's interpreter (the image has none).
      const first = await client.runPython({ contextId: 'state', code: 'import sys\nx = 41\nprint(sys.executable)' });
      assert.equal(first.error, null, JSON.stringify(first.error));
      assert.equal(first.stdout, '/opt/sandboxd/runtime/bin/python3\n');
      assert.equal((await client.runPython({ contextId: 'state', code: 'x + 1' })).result, '42');
      // The agent's own Python runs on the runtime too: the privileged helper (a restore fix-up renames the VM)
      // and a terminal's relay.
      await client.restore({ hostname: 'renamed-vm', vmId: 'oci-busybox' });
      assert.match(await shell(client, 'cat /proc/sys/kernel/hostname /etc/hosts'), /^renamed-vm\n[\s\S]*127\.0\.1\.1\trenamed-vm/);
      assert.match(await terminalOutput(client, ['/bin/sh', '-c', '/bin/busybox sleep 1; echo "pty: $GREETING"']), /pty: hello from busybox/);
    } finally {
      await client.close();
    }
  });

  test('a second build of the same digest is a cache hit', async () => {
    const reference = `${locked.host}/sandboxd-test/busybox:${BUSYBOX_TAG}`;
    const first = built.find((image) => image.reference === reference);
    assert.ok(first, 'the busybox image was built before');
    const { image, events, ms } = await build(reference, { credentials: CREDENTIALS });
    assert.equal(image.dir, first.dir);
    assert.ok(
      events.some((e) => e.type === 'cached'),
      'reported as cached',
    );
    assert.deepEqual(
      events.filter((e) => e.type === 'step-start').map((e) => e.type === 'step-start' && e.step),
      ['resolve'],
      'nothing after resolve ran',
    );
    assert.ok(ms < 5000, `took ${ms} ms`);
  });

  test("a Debian image made from the base layer boots: its own python3 runs the user's code; whiteouts were applied", async (t) => {
    const started = Date.now();
    await addDebianImage(layout, await commonBaseTar());
    const digest = await pushImage(open, layout.dir, DEBIAN_TAG, 'sandboxd-test/debian');
    t.diagnostic(`test image made and pushed in ${Date.now() - started} ms`);
    const { image, events, ms } = await build(`${open.host}/sandboxd-test/debian:${DEBIAN_TAG}`);
    t.diagnostic(`built in ${ms} ms: ${stepTimes(events)}`);
    assert.equal(image.digest, digest, 'the digest pulled is the one pushed');
    assert.equal(image.config.workingDir, '/srv');
    assert.equal(image.config.env.GREETING, 'hello from the image');
    assert.equal(image.config.env.HOME, '/home/app');

    const client = await boot(t, image, 'oci-debian', 'none');
    try {
      assert.equal(
        await shell(client, 'echo "$GREETING $HOME"; git --version | cut -d" " -f1-2; echo $BASH_VERSION | cut -c1'),
        'hello from the image /home/app\ngit version\n5\n',
      );
      assert.equal(await shell(client, `cat ${ADDED_FILE}; test -e /etc/motd || echo "motd whited out"`), `${ADDED_TEXT}\nmotd whited out\n`);
      const first = await client.runPython({ contextId: 'state', code: 'import sys\nx = 41\nprint(sys.executable)' });
      assert.equal(first.error, null, JSON.stringify(first.error));
      assert.equal(first.stdout, '/usr/bin/python3\n', "the image's own python3");
      assert.equal((await client.runPython({ contextId: 'state', code: 'import os\nos.getcwd()' })).result, "'/root'");
      assert.equal((await client.runPython({ contextId: 'state', code: 'x + 1' })).result, '42');
    } finally {
      await client.close();
    }
  });
});

/** Runs `argv` in a terminal and resolves with what it printed once it exited. */
async function terminalOutput(client: AgentClient, argv: string[]): Promise<string> {
  const info = await client.createPty({ argv, cols: 80, rows: 24 });
  return new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`the terminal did not exit; it printed ${JSON.stringify(text)}`)), 60_000);
    client
      .attachPty(info.id, {
        onOutput: (chunk) => {
          text += chunk.toString();
        },
        onExit: () => {
          clearTimeout(timer);
          resolve(text);
        },
      })
      .catch(reject);
  });
}

/** The step times of a build, for the test log. */
function stepTimes(events: OciBuildProgress[]): string {
  return events.flatMap((e) => (e.type === 'step-done' ? [`${e.step} ${e.stepMs} ms`] : [])).join(', ');
}

/** Auth-file directories of builds in the temp directory (there must be none left behind). */
async function authDirs(): Promise<string[]> {
  return (await readdir(tmpdir())).filter((name) => name.startsWith('sandboxd-registry-auth-')).sort();
}
