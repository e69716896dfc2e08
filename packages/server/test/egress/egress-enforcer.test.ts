/**
 * The host side of egress policies without a VM: a process placed in a cgroup of its own stands for a VM's
 * QEMU (the firewall knows a VM by its cgroup), and curl in it reaches test web servers in network namespaces
 * of their own through the resolver, the proxy and the rules. Names resolve through a DNS server the test runs.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { normalizeEgressPolicy, type EgressPolicy } from '../../src/core/egress-policy.ts';
import { cgroup2Mounts, classifierOf } from '../../src/net/egress/cgroup-classifier.ts';
import { EgressEnforcer, type EgressAttempt } from '../../src/net/egress/egress-enforcer.ts';
import { parseUpstream } from '../../src/net/egress/policy-resolver.ts';
import { egressTableName, type EgressClassifier } from '../../src/net/egress/ruleset.ts';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { startNetnsWebServer, type NetnsWebServer } from '../helpers/netns-web.ts';
import { createTestCa, type TestCa } from '../helpers/test-ca.ts';
import { waitUntil } from '../helpers/wait.ts';

const skip =
  process.getuid?.() !== 0 ? 'needs root (cgroups, nftables, network namespaces)' : spawnSync('curl', ['--version']).status !== 0 ? 'needs curl' : false;

function policy(overrides: Partial<EgressPolicy>): EgressPolicy {
  return normalizeEgressPolicy({ allowPackageManagers: false, allowHttp: true, allowHttps: true, allowedDomains: [], allowedCidrs: [], ...overrides });
}

describe('egress enforcement on the host (a cgroup standing for a VM)', { skip }, () => {
  let dns: DnsServer;
  let ca: TestCa;
  let serverA: NetnsWebServer;
  let serverB: NetnsWebServer;
  let enforcer: EgressEnforcer;
  let cgroupDir: string;
  let classifier: EgressClassifier;
  const attempts: EgressAttempt[] = [];
  const VM = 'test-vm-1';
  const TABLE = egressTableName(`egress-enforcer-test-${process.pid}`);

  /** Runs curl inside the cgroup; resolves with its exit code and output (`%{http_code}` last). */
  function curl(...args: string[]): Promise<{ code: number; out: string; ms: number }> {
    const started = Date.now();
    return new Promise((resolve) => {
      const child = spawn('sh', [
        '-c',
        `echo $$ > ${path.join(cgroupDir, 'cgroup.procs')} && exec curl -sS -m 8 --cacert ${ca.caCertPath} -w '\\n%{http_code}' "$@"`,
        'curl',
        ...args,
      ]);
      let out = '';
      child.stdout.on('data', (c) => (out += c));
      child.stderr.on('data', (c) => (out += c));
      child.once('exit', (code) => resolve({ code: code ?? -1, out, ms: Date.now() - started }));
    });
  }

  before(async () => {
    dns = await startDnsServer();
    ca = await createTestCa(['a.test', 'b.test']);
    serverA = await startNetnsWebServer({ '/hello': 'hello from a' }, { tls: { certPath: ca.certPath, keyPath: ca.keyPath } });
    serverB = await startNetnsWebServer({ '/hello': 'hello from b' }, { tls: { certPath: ca.certPath, keyPath: ca.keyPath } });
    dns.setA('a.test', [serverA.serverAddress]);
    dns.setA('b.test', [serverB.serverAddress]);
    const mount = (await cgroup2Mounts())[0];
    assert.ok(mount, 'a cgroup2 mount');
    cgroupDir = path.join(mount, `sandboxd-egress-test-${process.pid}`);
    fs.mkdirSync(cgroupDir, { recursive: true });
    const found = classifierOf(cgroupDir, await cgroup2Mounts());
    assert.ok(found, `nft can match ${cgroupDir}`);
    classifier = found;
    enforcer = new EgressEnforcer({ table: TABLE, upstreams: [parseUpstream(dns.address)], onAttempt: (a) => attempts.push(a) });
  });

  after(async () => {
    await enforcer?.remove(VM);
    await enforcer?.close();
    spawnSync('nft', ['delete', 'table', 'inet', TABLE]);
    if (cgroupDir) fs.rmdirSync(cgroupDir);
    await Promise.all([serverA?.stop(), serverB?.stop(), dns?.close()]);
    ca?.remove();
  });

  test('allowed_domains ["a.test"]: a.test over HTTP and HTTPS, not b.test, not b.test\'s raw address', async () => {
    await enforcer.apply(VM, classifier, policy({ allowedDomains: ['a.test'] }));
    const http = await curl('http://a.test/hello');
    assert.equal(http.code, 0, http.out);
    assert.match(http.out, /hello from a\n200$/);
    const https = await curl('https://a.test/hello');
    assert.equal(https.code, 0, https.out);
    assert.match(https.out, /hello from a\n200$/);
    const other = await curl('http://b.test/hello');
    assert.notEqual(other.code, 0, other.out); // NXDOMAIN: curl cannot resolve it
    const raw = await curl(`http://${serverB.serverAddress}/hello`);
    assert.match(raw.out, /403$/);
    const rawTls = await curl('-k', `https://${serverB.serverAddress}/hello`);
    assert.notEqual(rawTls.code, 0, rawTls.out);
    const sniSpoof = await curl('--resolve', `a.test:443:${serverB.serverAddress}`, 'https://a.test/hello');
    // The proxy connects to a.test's own address, whatever the guest put in its hosts file.
    assert.match(sniSpoof.out, /hello from a\n200$/);
    const otherPort = await curl(`http://${serverB.serverAddress}:8080/`);
    assert.notEqual(otherPort.code, 0);
  });

  test('the attempts are reported with their verdicts, names, addresses and bytes', async () => {
    // The firewall's own verdicts arrive through `nft monitor trace`, a moment after the packet.
    await waitUntil('the refusal of port 8080 is reported', async () => attempts.some((a) => a.port === 8080));
    const allowed = attempts.find((a) => a.name === 'a.test' && a.scheme === 'http' && a.verdict === 'allowed');
    assert.ok(allowed, JSON.stringify(attempts));
    assert.equal(allowed.address, serverA.serverAddress);
    assert.ok((allowed.bytesReceived ?? 0) > 0 && (allowed.bytesSent ?? 0) > 0);
    assert.ok(attempts.find((a) => a.name === 'a.test' && a.scheme === 'https' && a.verdict === 'allowed'));
    assert.ok(attempts.find((a) => a.protocol === 'dns' && a.name === 'b.test' && a.verdict === 'refused'));
    assert.ok(attempts.find((a) => a.address === serverB.serverAddress && a.scheme === 'http' && a.verdict === 'refused'));
    assert.ok(
      attempts.find((a) => a.address === serverB.serverAddress && a.port === 8080 && a.verdict === 'refused'),
      JSON.stringify(attempts),
    );
  });

  test('a policy change applies to the next connection within a second', async () => {
    const started = Date.now();
    await enforcer.apply(VM, classifier, policy({ allowedDomains: ['b.test'] }));
    const appliedMs = Date.now() - started;
    assert.ok(appliedMs < 1000, `applied in ${appliedMs} ms`);
    assert.match((await curl('http://b.test/hello')).out, /hello from b\n200$/);
    assert.notEqual((await curl('http://a.test/hello')).code, 0);
  });

  test('allow_http false closes port 80 only', async () => {
    await enforcer.apply(VM, classifier, policy({ allowedDomains: ['a.test'], allowHttp: false }));
    const http = await curl('http://a.test/hello');
    assert.notEqual(http.code, 0, http.out);
    assert.match((await curl('https://a.test/hello')).out, /hello from a\n200$/);
    await waitUntil('the refusal of port 80 is reported', async () =>
      attempts.some(
        (a) => a.port === 80 && a.address === serverA.serverAddress && a.verdict === 'refused' && a.reason === 'http is closed by the egress policy',
      ),
    );
  });

  test('allowed_cidrs open an address on any port; removing the VM removes its rules', async () => {
    await enforcer.apply(VM, classifier, policy({ allowedCidrs: [`${serverB.serverAddress}/32`] }));
    assert.match((await curl(`http://${serverB.serverAddress}/hello`)).out, /hello from b\n200$/);
    await enforcer.remove(VM);
    const table = spawnSync('nft', ['list', 'table', 'inet', TABLE], { encoding: 'utf8' }).stdout;
    assert.doesNotMatch(table, /test_vm_1/);
  });
});
