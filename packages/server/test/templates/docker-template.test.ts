/**
 * Docker inside a VM (issue 38): the built-in `docker` template on a real server and a real VM. In one sandbox: a
 * base image made with `docker import` from a tar of busybox (nothing can be pulled from Docker Hub here), an image
 * built from it with `docker build` (a RUN step and a CMD) and run with `docker run --rm`, then a two-service
 * `docker compose up` (busybox httpd serving a file, a second service fetching it by the first's service name).
 * Another user gets 404 on the VM. The template's image and snapshot are cached across runs like the desktop's
 * (the image cache and the snapshot directory outlive the test's data directory); the first run builds them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

/** A Dockerfile on the imported base: a RUN step whose result the CMD prints. */
const DOCKERFILE = `FROM sandboxd-busybox:latest
RUN echo "built-by-run-$((6 * 7))" > /greeting
CMD ["/bin/sh", "-c", "cat /greeting; echo cmd-ran"]
`;

/**
 * Two services on compose's default network: `web` serves a file, `client` fetches it by the service name `web`
 * (the network's embedded DNS) and prints it. `$$` is compose's escape for a `$` the shell should see.
 */
const COMPOSE_FILE = `version: "3"
services:
  web:
    image: sandboxd-busybox:latest
    command: ["/bin/sh", "-c", "mkdir -p /www && echo served-by-web-$$((6 * 7)) > /www/index.html && exec httpd -f -p 8080 -h /www"]
  client:
    image: sandboxd-busybox:latest
    depends_on: [web]
    command: ["/bin/sh", "-c", "for i in $$(seq 1 60); do wget -q -O - http://web:8080/index.html && exit 0; sleep 1; done; exit 1"]
`;

describe('the docker template on a real VM', { timeout: 40 * 60_000 }, () => {
  let server: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let vmId: string;
  let sessionId: string;

  const bash = async (command: string, timeout = 600): Promise<{ exit_code: number; stdout: string; stderr: string; ms: number }> => {
    const started = performance.now();
    const run = await call(server, 'POST', '/execute', { apiKey: alice.apiKey, json: { session_id: sessionId, command, language: 'bash', timeout } });
    assert.equal(run.status, 200, run.text);
    return { ...run.body, ms: performance.now() - started };
  };

  before(async () => {
    server = await startTestServer({});
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
    // The first run on a machine builds the template's image (mmdebstrap) and snapshot (a cold boot that starts
    // dockerd); later runs restore it.
    const started = performance.now();
    const created = await call(server, 'POST', '/v1/vms', { apiKey: alice.apiKey, json: { template: 'docker', vm_lifetime_seconds: 1800 } });
    assert.equal(created.status, 200, created.text);
    console.log(`docker template: VM ready in ${Math.round(performance.now() - started)} ms (includes the template's build on a first run)`);
    vmId = created.body.vm_id;
    sessionId = created.body.session_id;
  });
  after(async () => {
    await server?.close();
  });

  test('the daemon is up at once in a restored VM; an image imported from a busybox tar runs, with cgroup limits', async () => {
    const info = await bash("docker info --format '{{.ServerVersion}} {{.Driver}} {{.CgroupVersion}}'; cat /proc/$(pidof dockerd)/cgroup", 60);
    assert.equal(info.exit_code, 0, info.stderr);
    assert.match(info.stdout, /^20\.10\.\d+\S* overlay2 2\n/, 'dockerd 20.10 answers, on overlay2 and cgroup v2');
    assert.match(info.stdout, /\n0::\/sandboxd-exec\/docker-daemons\n$/, "the daemons share the user's programs' CPU weight and process cap");
    const imported = await bash(
      [
        'set -e',
        // A merged-/usr tree like Debian's: --install -s links each applet to busybox's real path, /usr/bin/busybox.
        'rm -rf /tmp/busybox-root && mkdir -p /tmp/busybox-root/usr/bin /tmp/busybox-root/tmp && ln -s usr/bin /tmp/busybox-root/bin',
        'cp /bin/busybox /tmp/busybox-root/usr/bin/busybox',
        '/bin/busybox --install -s /tmp/busybox-root/usr/bin',
        'tar -C /tmp/busybox-root -cf /tmp/busybox.tar .',
        'docker import /tmp/busybox.tar sandboxd-busybox:latest >/dev/null',
        'docker run --rm sandboxd-busybox:latest /bin/sh -c "echo imported-$((6 * 7))"',
        // cgroup v2 limits reach the container (memory and pids: controllers the guest enables).
        'docker run --rm --memory 64m --pids-limit 50 sandboxd-busybox:latest cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max',
      ].join('\n'),
    );
    assert.equal(imported.exit_code, 0, imported.stderr);
    assert.equal(imported.stdout, 'imported-42\n67108864\n50\n');
    console.log(`docker template: import + two docker run --rm in ${Math.round(imported.ms)} ms`);
  });

  test('docker build from a Dockerfile on the local base, then docker run --rm prints what RUN made', async () => {
    const built = await bash(
      `set -e\nrm -rf /tmp/app && mkdir -p /tmp/app && cd /tmp/app\ncat > Dockerfile <<'EOF'\n${DOCKERFILE}EOF\ndocker build -q -t sandboxd-app:1 . >/dev/null\ndocker run --rm sandboxd-app:1`,
    );
    assert.equal(built.exit_code, 0, built.stderr);
    assert.equal(built.stdout, 'built-by-run-42\ncmd-ran\n');
    console.log(`docker template: docker build + run in ${Math.round(built.ms)} ms`);
  });

  test('docker compose up: a service fetches a file from another by its service name', async () => {
    // One compose run (each start of compose v1, a Python program, costs seconds under TCG): `up` prints the
    // services' output; `-t 1` stops `web` (httpd ignores SIGTERM as PID 1) a second after `client` is done.
    const up = await bash(
      [
        'set -e',
        'rm -rf /tmp/stack && mkdir -p /tmp/stack && cd /tmp/stack',
        `cat > docker-compose.yml <<'EOF'\n${COMPOSE_FILE}EOF`,
        'docker compose up --no-color -t 1 --abort-on-container-exit --exit-code-from client 2>&1',
      ].join('\n'),
    );
    assert.equal(up.exit_code, 0, `${up.stdout}${up.stderr}`);
    // `client_1` (v2 would name it `client-1`): compose v1, reached through the `docker compose` plugin.
    assert.match(up.stdout, /client_1\s+\| served-by-web-42\n/, up.stdout);
    console.log(`docker template: docker compose up (two services) in ${Math.round(up.ms)} ms`);
  });

  test('another user gets 404 on the docker VM and cannot run in its session', async () => {
    assert.equal((await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey: bob.apiKey })).status, 404);
    const run = await call(server, 'POST', '/execute', { apiKey: bob.apiKey, json: { session_id: sessionId, command: 'docker ps', language: 'bash' } });
    assert.equal(run.status, 404, run.text);
  });
});
