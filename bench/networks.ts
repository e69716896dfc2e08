/**
 * bench:networks — private networks between two VMs (issue 38), through the HTTP API on real VMs. Two VMs on one
 * network; one serves HTTP (python3 -m http.server), the other measures, in the guest, side by side in one run:
 *   - latency: a new TCP connection and a small GET, `BENCH_REQUESTS` times (default 20), p50 and min, to the other
 *     member by name (through the host relay and the agent tunnel) and, for comparison, to a server on the guest's
 *     own loopback (no network at all);
 *   - throughput: one 50 MiB GET, the same two ways;
 *   - and both from the host through the preview proxy (the agent tunnel alone, without the client VM and the relay).
 * `npm run bench:networks` (root, a quiet host); ends with one JSON line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildApp } from '../packages/server/src/app.ts';
import { loadConfig } from '../packages/server/src/config/index.ts';

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20);
const PORT = 8000;
const log = (message: string) => process.stderr.write(`[bench:networks] ${message}\n`);

/** Measures, in the guest, latency and throughput to `host` (printed as JSON). */
function measure(host: string): string {
  return [
    'import http.client, time, statistics, json',
    'times = []',
    `for _ in range(${REQUESTS}):`,
    '    t = time.perf_counter()',
    `    c = http.client.HTTPConnection(${JSON.stringify(host)}, ${PORT}, timeout=30)`,
    '    c.request("GET", "/hello.txt")',
    '    c.getresponse().read()',
    '    c.close()',
    '    times.append((time.perf_counter() - t) * 1000)',
    't = time.perf_counter()',
    `c = http.client.HTTPConnection(${JSON.stringify(host)}, ${PORT}, timeout=300)`,
    'c.request("GET", "/big.bin")',
    'r = c.getresponse()',
    'n = 0',
    'while True:',
    '    b = r.read(1 << 20)',
    '    if not b: break',
    '    n += len(b)',
    'seconds = time.perf_counter() - t',
    'print(json.dumps({"p50_ms": round(statistics.median(times), 2), "min_ms": round(min(times), 2), "mib": n / 2**20, "mib_per_s": round(n / seconds / 2**20, 1)}))',
  ].join('\n');
}

const SERVE =
  'mkdir -p /srv/net && echo hello > /srv/net/hello.txt && head -c 52428800 /dev/zero > /srv/net/big.bin && ' +
  `(setsid python3 -m http.server ${PORT} --directory /srv/net >/dev/null 2>&1 < /dev/null &) && ` +
  `up=0; for i in $(seq 1 150); do if (exec 3<>/dev/tcp/127.0.0.1/${PORT}) 2>/dev/null; then up=1; break; fi; sleep 0.2; done; [ $up = 1 ]`;

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench:networks needs root (nftables, the VM user)');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-bench-networks-'));
  const config = loadConfig(process.env, { dataDir, host: '127.0.0.1', port: 0, logLevel: 'silent', poolSize: 0, warmVcpus: [1] });
  const { app, services } = await buildApp({ config, logger: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  const baseUrl = `http://127.0.0.1:${address.port}`;
  const user = await services.users.create({ username: 'bench', password: 'bench-password-long', plan: 'enterprise' });
  const apiKey = (await services.apiKeys.create(user.id, { description: 'bench:networks' })).fullKey;
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
  const exec = async (sessionId: string, language: 'bash' | 'python', code: string): Promise<string> => {
    const run = await api('POST', '/execute', { session_id: sessionId, language, ...(language === 'bash' ? { command: code } : { code }), timeout: 600 });
    if (run.exit_code !== 0) throw new Error(`exit ${String(run.exit_code)}: ${String(run.stderr)}`);
    return String(run.stdout);
  };
  try {
    await api('POST', '/v1/networks', { name: 'bench' });
    log('starting two VMs on network "bench"');
    const server = await api('POST', '/v1/vms', { name: 'server', networks: ['bench'], vcpu_count: 1, vm_lifetime_seconds: 1800 });
    const client = await api('POST', '/v1/vms', { name: 'client', networks: ['bench'], vcpu_count: 1, vm_lifetime_seconds: 1800 });
    await exec(String(server.session_id), 'bash', SERVE);
    await exec(String(client.session_id), 'bash', SERVE);
    const member = JSON.parse(
      await exec(String(client.session_id), 'python', measure('server.bench.internal')).then((out) => out.trim().split('\n').at(-1)!),
    ) as Record<string, number>;
    const loopback = JSON.parse(await exec(String(client.session_id), 'python', measure('127.0.0.1')).then((out) => out.trim().split('\n').at(-1)!)) as Record<
      string,
      number
    >;
    // The tunnel alone: the same requests from this process through the preview proxy (the agent tunnel the relay
    // uses, without the client VM's slirp and the relay).
    const preview = `${baseUrl}/v1/app/${String(server.session_id)}/${PORT}`;
    const times: number[] = [];
    for (let i = 0; i < REQUESTS; i++) {
      const t = performance.now();
      await (await fetch(`${preview}/hello.txt`, { headers: { 'x-api-key': apiKey } })).arrayBuffer();
      times.push(performance.now() - t);
    }
    const t = performance.now();
    const bytes = (await (await fetch(`${preview}/big.bin`, { headers: { 'x-api-key': apiKey } })).arrayBuffer()).byteLength;
    const seconds = (performance.now() - t) / 1000;
    times.sort((a, b) => a - b);
    const tunnel = {
      p50_ms: Math.round(times[Math.floor(times.length / 2)]! * 100) / 100,
      min_ms: Math.round(times[0]! * 100) / 100,
      mib: bytes / 2 ** 20,
      mib_per_s: Math.round((bytes / seconds / 2 ** 20) * 10) / 10,
    };
    log(`                      connect+GET p50   min     50 MiB`);
    log(`member → member       ${String(member.p50_ms).padStart(8)} ms ${String(member.min_ms).padStart(6)} ms ${String(member.mib_per_s).padStart(7)} MiB/s`);
    log(
      `guest loopback        ${String(loopback.p50_ms).padStart(8)} ms ${String(loopback.min_ms).padStart(6)} ms ${String(loopback.mib_per_s).padStart(7)} MiB/s`,
    );
    log(
      `host → tunnel (preview) ${String(tunnel.p50_ms).padStart(6)} ms ${String(tunnel.min_ms).padStart(6)} ms ${String(tunnel.mib_per_s).padStart(7)} MiB/s`,
    );
    console.log(JSON.stringify({ requests: REQUESTS, member, loopback, tunnel }));
  } finally {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
