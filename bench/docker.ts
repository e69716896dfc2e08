/**
 * Docker-in-a-VM benchmark (issue 38), through the HTTP API on real VMs: the built-in `docker` template's restore
 * (POST /v1/vms until the VM is ready) beside the default template's in the same run, and, in each fresh docker
 * sandbox, the first `docker run --rm` of a small image (busybox, imported in that sandbox: nothing is pulled)
 * beside the second one. The template's image and snapshot are built first if they are not cached (not measured).
 * `npm run bench:docker` (root, a quiet host); ends with one JSON line. BENCH_ROUNDS (default 3) rounds of each.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../packages/server/src/app.ts';
import { loadConfig } from '../packages/server/src/config/index.ts';
import { percentile } from './first-result.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const log = (message: string) => process.stderr.write(`[bench:docker] ${message}\n`);
const p50 = (values: number[]) => Math.round(percentile(values, 50));

/** Makes a busybox base image in the VM (a tar of the static busybox, `docker import`), as the test does. */
const IMPORT_BUSYBOX = [
  'set -e',
  'rm -rf /tmp/bb && mkdir -p /tmp/bb/usr/bin /tmp/bb/tmp && ln -s usr/bin /tmp/bb/bin',
  'cp /bin/busybox /tmp/bb/usr/bin/ && /bin/busybox --install -s /tmp/bb/usr/bin',
  'tar -C /tmp/bb -c . | docker import - bench-busybox:latest >/dev/null',
].join('\n');
/** One `docker run --rm`, timed in the guest (ms), so the API's round trip is not in the number. */
const TIMED_RUN = 's=$(date +%s%N); docker run --rm bench-busybox:latest /bin/true; e=$(date +%s%N); echo $(( (e - s) / 1000000 ))';

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-docker-'));
  const config = loadConfig(process.env, { dataDir, host: '127.0.0.1', port: 0, logLevel: 'silent', poolSize: 0, warmVcpus: [1] });
  const { app, services } = await buildApp({ config, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const user = await services.users.create({ username: 'bench', password: 'bench-password-long', plan: 'enterprise' });
  const apiKey = (await services.apiKeys.create(user.id, { description: 'bench:docker' })).fullKey;

  const api = async (method: string, url: string, json?: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(baseUrl + url, {
      method,
      headers: { 'x-api-key': apiKey, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  };
  const bash = async (sessionId: string, command: string): Promise<string> => {
    const run = await api('POST', '/execute', { session_id: sessionId, command, language: 'bash', timeout: 600 });
    if (run.exit_code !== 0) throw new Error(`${command}: exit ${String(run.exit_code)}: ${String(run.stderr)}`);
    return String(run.stdout);
  };
  const createVm = async (template: string): Promise<{ ms: number; vmId: string; sessionId: string }> => {
    const started = performance.now();
    const vm = await api('POST', '/v1/vms', { template, vm_lifetime_seconds: 1800 });
    return { ms: performance.now() - started, vmId: String(vm.vm_id), sessionId: String(vm.session_id) };
  };

  const results: Record<string, number | string> = { rounds: ROUNDS };
  try {
    log('preparing: the docker template (image and snapshot: built now if not cached) and the default one');
    const [prepMs, first] = await (async () => {
      const vm = await createVm('docker');
      return [vm.ms, vm] as const;
    })();
    results.first_docker_vm_ms = Math.round(prepMs);
    results.docker_version = (await bash(first.sessionId, "docker version --format '{{.Server.Version}}'")).trim();
    await api('DELETE', `/v1/vms/${first.vmId}`);
    await api('DELETE', `/v1/vms/${(await createVm('default')).vmId}`);

    const restores = { docker: [] as number[], default: [] as number[] };
    const imports: number[] = [];
    const firstRuns: number[] = [];
    const secondRuns: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      // A/B: the default template's restore right before the docker template's, on the same host state.
      const plain = await createVm('default');
      restores.default.push(plain.ms);
      await api('DELETE', `/v1/vms/${plain.vmId}`);
      const vm = await createVm('docker');
      restores.docker.push(vm.ms);
      const importStart = performance.now();
      await bash(vm.sessionId, IMPORT_BUSYBOX);
      imports.push(performance.now() - importStart);
      const firstRun = Number(await bash(vm.sessionId, TIMED_RUN));
      const secondRun = Number(await bash(vm.sessionId, TIMED_RUN));
      firstRuns.push(firstRun);
      secondRuns.push(secondRun);
      await api('DELETE', `/v1/vms/${vm.vmId}`);
      log(
        `round ${i + 1}: restore default ${Math.round(plain.ms)} ms, docker ${Math.round(vm.ms)} ms; import ${Math.round(imports.at(-1)!)} ms; ` +
          `docker run --rm first ${firstRun} ms, second ${secondRun} ms`,
      );
    }
    results.restore_default_p50_ms = p50(restores.default);
    results.restore_docker_p50_ms = p50(restores.docker);
    results.docker_import_busybox_p50_ms = p50(imports);
    results.first_docker_run_p50_ms = p50(firstRuns);
    results.second_docker_run_p50_ms = p50(secondRuns);
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(config.vm.vmSnapshotDir, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(results)}\n`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
