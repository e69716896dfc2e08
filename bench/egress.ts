/**
 * bench:egress — what an egress policy costs per connection, A/B in one run. A process in a cgroup of its own
 * stands for a VM's QEMU (the firewall knows VMs by cgroup), and makes fresh HTTP and HTTPS connections to a
 * test web server in a network namespace: once with no policy (direct), once under a restricted policy (the
 * connection goes through the firewall's redirect and the host proxy, which reads the Host or the SNI, checks
 * the policy and connects upstream). Also: a DNS lookup direct vs. through the policy resolver (which pins the
 * answer in nftables before replying), and how long a policy change takes to apply. Last, the vault's case:
 * HTTPS to a host a secret is bound to, whose TLS the proxy terminates (a leaf of the vault CA), rewriting each
 * request before it goes upstream over a TLS connection of its own. Its rewrite here swaps one header without
 * the store (the server's adds two indexed reads per connection and per request). Needs root.
 *
 *   node --import tsx bench/egress.ts [connections per case, default 200]
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { normalizeEgressPolicy } from '../packages/server/src/core/egress-policy.ts';
import { createCertificateAuthority, LeafCertificates } from '../packages/server/src/net/egress/certificate-authority.ts';
import { cgroup2Mounts, classifierOf } from '../packages/server/src/net/egress/cgroup-classifier.ts';
import { EgressEnforcer } from '../packages/server/src/net/egress/egress-enforcer.ts';
import { parseUpstream } from '../packages/server/src/net/egress/policy-resolver.ts';
import { egressTableName, runNft } from '../packages/server/src/net/egress/ruleset.ts';
import { startDnsServer } from '../packages/server/test/helpers/dns-server.ts';
import { startNetnsWebServer } from '../packages/server/test/helpers/netns-web.ts';
import { createTestCa } from '../packages/server/test/helpers/test-ca.ts';

const COUNT = Number(process.argv[2] ?? 200);

/** Runs in the cgroup: `COUNT` requests, each on a new connection; prints the milliseconds of each as JSON. */
const CLIENT = `
const [url, count, ca, resolver, name] = process.argv.slice(1);
const http = require(url.startsWith('https') ? 'https' : 'http');
const dns = require('dns');
const fs = require('fs');
async function main() {
  const times = [];
  if (url === 'dns') {
    const r = new dns.promises.Resolver(); r.setServers([resolver]);
    for (let i = 0; i < Number(count); i++) { const t = process.hrtime.bigint(); await r.resolve4(name); times.push(Number(process.hrtime.bigint() - t) / 1e6); }
  } else {
    const agent = new http.Agent({ keepAlive: false, ...(ca ? { ca: fs.readFileSync(ca) } : {}) });
    for (let i = 0; i < Number(count); i++) {
      const t = process.hrtime.bigint();
      await new Promise((resolve, reject) => http.get(url, { agent, headers: { host: name }, servername: name, lookup: (h, o, cb) => cb(null, [{ address: h, family: 4 }]) }, (res) => { res.resume(); res.on('end', resolve); }).on('error', reject));
      times.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
  }
  process.stdout.write(JSON.stringify(times));
}
main().catch((e) => { console.error(e.message); process.exit(1); });
`;

function run(cgroupDir: string, ...args: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `echo $$ > ${path.join(cgroupDir, 'cgroup.procs')} && exec "$@"`, 'sh', process.execPath, '-e', CLIENT, ...args]);
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as number[]) : reject(new Error(err))));
  });
}

function stats(times: number[]): { p50: number; p90: number; mean: number } {
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { p50: at(0.5), p90: at(0.9), mean: times.reduce((a, b) => a + b, 0) / times.length };
}

const fmt = (n: number) => n.toFixed(2).padStart(7);

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('bench:egress needs root (cgroups, nftables, network namespaces)');
  const dns = await startDnsServer();
  const ca = await createTestCa(['a.test']);
  const web = await startNetnsWebServer({ '/hello': 'hello' }, { tls: { certPath: ca.certPath, keyPath: ca.keyPath } });
  dns.setA('a.test', [web.serverAddress]);
  const mount = (await cgroup2Mounts())[0]!;
  const cgroupDir = path.join(mount, `sandboxd-egress-bench-${process.pid}`);
  fs.mkdirSync(cgroupDir, { recursive: true });
  const classifier = classifierOf(cgroupDir, await cgroup2Mounts())!;
  const table = egressTableName(`egress-bench-${process.pid}`);
  const vaultCa = await createCertificateAuthority('bench vault CA');
  const vaultCaPath = path.join(os.tmpdir(), `egress-bench-vault-ca-${process.pid}.pem`);
  fs.writeFileSync(vaultCaPath, vaultCa.certPem);
  let intercepting = false;
  const leafs = new LeafCertificates(vaultCa);
  const enforcer = new EgressEnforcer({
    table,
    upstreams: [parseUpstream(dns.address)],
    onAttempt: () => undefined,
    vault: {
      plan: async () => (intercepting ? { intercept: true } : null),
      rewrite: async (_vmId, request) => ({ path: request.path, rawHeaders: [...request.rawHeaders, 'x-api-key', 'the-secret-value'] }),
      leafs: async () => leafs,
      upstreamCa: [fs.readFileSync(ca.caCertPath, 'utf8')],
    },
  });
  const restricted = normalizeEgressPolicy({ allowPackageManagers: false, allowHttp: true, allowHttps: true, allowedDomains: ['a.test'], allowedCidrs: [] });
  const rows: [string, ReturnType<typeof stats>][] = [];
  try {
    // Warm both paths (first TLS handshake, module loading) before measuring.
    await run(cgroupDir, `http://${web.serverAddress}/hello`, '5', '', '', 'a.test');
    rows.push(['HTTP, new connection, no policy', stats(await run(cgroupDir, `http://${web.serverAddress}/hello`, String(COUNT), '', '', 'a.test'))]);
    rows.push([
      'HTTPS, new connection, no policy',
      stats(await run(cgroupDir, `https://${web.serverAddress}/hello`, String(COUNT), ca.caCertPath, '', 'a.test')),
    ]);
    rows.push(['DNS A lookup, direct to the server', stats(await run(cgroupDir, 'dns', String(COUNT), '', dns.address, 'a.test'))]);

    const applies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const started = process.hrtime.bigint();
      await enforcer.apply('bench-vm', classifier, i % 2 ? restricted : { ...restricted, allowedDomains: ['a.test', 'b.test'] });
      applies.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    await enforcer.apply('bench-vm', classifier, restricted);
    rows.push(['HTTP, new connection, through the policy', stats(await run(cgroupDir, `http://${web.serverAddress}/hello`, String(COUNT), '', '', 'a.test'))]);
    rows.push([
      'HTTPS, new connection, through the policy',
      stats(await run(cgroupDir, `https://${web.serverAddress}/hello`, String(COUNT), ca.caCertPath, '', 'a.test')),
    ]);
    // Any DNS server the process names is redirected to the policy resolver (which forwards to the same one).
    rows.push(['DNS A lookup, through the policy resolver', stats(await run(cgroupDir, 'dns', String(COUNT), '', '192.0.2.53', 'a.test'))]);
    rows.push(['policy change applied (nft transaction)', stats(applies.slice(1))]);
    // What a restricted VM adds to its start: its resolver and proxy listeners, the table and its chains.
    const firsts: number[] = [];
    for (let i = 0; i < 10; i++) {
      await enforcer.remove('bench-vm');
      const started = process.hrtime.bigint();
      await enforcer.apply('bench-vm', classifier, restricted);
      firsts.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    rows.push(['first apply of a VM (added to its start)', stats(firsts)]);
    intercepting = true;
    await run(cgroupDir, `https://${web.serverAddress}/hello`, '5', vaultCaPath, '', 'a.test');
    rows.push([
      'HTTPS, new connection, vault interception',
      stats(await run(cgroupDir, `https://${web.serverAddress}/hello`, String(COUNT), vaultCaPath, '', 'a.test')),
    ]);
  } finally {
    fs.rmSync(vaultCaPath, { force: true });
    await enforcer.close({ dropRules: true });
    await runNft(`delete table inet ${table}\n`).catch(() => undefined);
    fs.rmdirSync(cgroupDir);
    await Promise.all([web.stop(), dns.close()]);
    ca.remove();
  }
  console.log(`bench:egress — ${COUNT} requests per case, each on a new connection (ms)\n`);
  console.log(`${'case'.padEnd(44)}    p50     p90    mean`);
  for (const [name, s] of rows) console.log(`${name.padEnd(44)}${fmt(s.p50)} ${fmt(s.p90)} ${fmt(s.mean)}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
