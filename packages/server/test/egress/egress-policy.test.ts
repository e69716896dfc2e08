/**
 * Egress policies on real VMs, through HTTP. The web servers a.test and b.test run in network namespaces the
 * test creates (HTTP and HTTPS with a test CA), and the names resolve through a DNS server the test runs, so no
 * traffic leaves this machine. With `allowed_domains: ["a.test"]` the guest reaches a.test over HTTP and HTTPS
 * and neither b.test nor b.test's raw address; a policy change flips that for the running VM within a second;
 * `allow_http: false` closes port 80 only; the egress log lists the attempts with their verdicts; root in the
 * guest cannot lift the policy (its own firewall, resolv.conf, another DNS server, its hosts file).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { makeHome, runCli } from '../../../cli/test/run-cli.ts';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { startNetnsWebServer, type NetnsWebServer } from '../helpers/netns-web.ts';
import { createTestCa, type TestCa } from '../helpers/test-ca.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';

const skip =
  process.getuid?.() !== 0 ? 'needs root (nftables, cgroups, network namespaces)' : spawnSync('nft', ['--version']).status !== 0 ? 'needs nft' : false;

describe('egress policies of running VMs', { skip }, () => {
  let server: TestServer;
  let apiKey: string;
  let otherKey: string;
  let dns: DnsServer;
  let ca: TestCa;
  let a: NetnsWebServer;
  let b: NetnsWebServer;
  let sessionId: string;
  let vmId: string;

  /** Runs bash in the session's VM; resolves with stdout. */
  async function guest(command: string): Promise<string> {
    const res = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command, timeout: 60 } });
    assert.equal(res.status, 200, res.text);
    vmId = res.body.vm_id;
    return String(res.body.stdout);
  }

  /** One line per URL: `<url> <curl exit code> <http code> <first body line>`. */
  async function fetchAll(...args: string[]): Promise<Map<string, { exit: number; status: string; body: string }>> {
    const script = args
      .map(
        (url) =>
          `out=$(curl -sS -m 10 --cacert /tmp/egress-ca.pem -o /tmp/body -w '%{http_code}' ${url} 2>/dev/null); echo "${url} $? $out $(head -c 40 /tmp/body 2>/dev/null | tr -d '\\n')"; rm -f /tmp/body`,
      )
      .join('\n');
    const lines = (await guest(script)).trim().split('\n');
    const results = new Map<string, { exit: number; status: string; body: string }>();
    for (const line of lines) {
      const [url, exit, status, ...body] = line.split(' ');
      results.set(url!, { exit: Number(exit), status: status!, body: body.join(' ') });
    }
    return results;
  }

  before(async () => {
    dns = await startDnsServer();
    ca = await createTestCa(['a.test', 'b.test']);
    const tls = { certPath: ca.certPath, keyPath: ca.keyPath };
    a = await startNetnsWebServer({ '/hello': 'hello from a' }, { tls });
    b = await startNetnsWebServer({ '/hello': 'hello from b' }, { tls });
    dns.setA('a.test', [a.serverAddress]);
    dns.setA('b.test', [b.serverAddress]);
    server = await startTestServer({ config: { egressDnsServers: [dns.address] } });
    ({ apiKey } = await server.createUserWithKey('egress', 'pro'));
    ({ apiKey: otherKey } = await server.createUserWithKey('egress-other', 'pro'));
    const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1, egress_policy: { allowed_domains: ['a.test'] } } });
    assert.equal(created.status, 200, created.text);
    sessionId = created.body.session_id;
    // The guest trusts the test CA through a file of its own (curl --cacert).
    await guest(`cat > /tmp/egress-ca.pem <<'PEM'\n${fs.readFileSync(ca.caCertPath, 'utf8')}PEM`);
  });

  after(async () => {
    await server?.close();
    await Promise.all([a?.stop(), b?.stop(), dns?.close()]);
    ca?.remove();
  });

  test('allowed_domains ["a.test"]: a.test over HTTP and HTTPS, not b.test, not a raw address of b.test', async () => {
    const policy = await call(server, 'GET', `/v1/vms/${vmId}/egress`, { apiKey });
    assert.equal(policy.status, 200, policy.text);
    assert.deepEqual(policy.body, {
      allow_package_managers: false,
      allow_http: true,
      allow_https: true,
      allowed_domains: ['a.test'],
      allowed_cidrs: [],
      allowed_ports: [],
      source: 'vm',
      enforced: true,
    });
    const results = await fetchAll(
      'http://a.test/hello',
      'https://a.test/hello',
      'http://b.test/hello',
      'https://b.test/hello',
      `http://${b.serverAddress}/hello`,
      `https://${b.serverAddress}/hello`,
    );
    assert.deepEqual(results.get('http://a.test/hello'), { exit: 0, status: '200', body: 'hello from a' });
    assert.deepEqual(results.get('https://a.test/hello'), { exit: 0, status: '200', body: 'hello from a' });
    assert.equal(results.get('http://b.test/hello')!.exit, 6, 'b.test does not resolve');
    assert.equal(results.get('https://b.test/hello')!.exit, 6);
    assert.equal(results.get(`http://${b.serverAddress}/hello`)!.status, '403', 'a raw address is refused by the proxy');
    assert.notEqual(results.get(`https://${b.serverAddress}/hello`)!.exit, 0);
    assert.deepEqual(await b.requests(), [], 'b never saw a request');
  });

  test('root in the guest cannot lift the policy: its firewall, resolv.conf, another DNS server, its hosts file', async () => {
    const out = await guest(
      [
        'id -u',
        '(nft flush ruleset || iptables -F) >/dev/null 2>&1; true',
        `rm -f /etc/resolv.conf; echo "nameserver ${b.serverAddress}" > /etc/resolv.conf`,
        'getent hosts b.test >/dev/null && echo "resolved b.test" || echo "no b.test"',
        `python3 -c "import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5); q=bytes.fromhex('abcd01000001000000000000')+b'\\x01b\\x04test\\x00\\x00\\x01\\x00\\x01'; s.sendto(q, ('1.1.1.1', 53)); r=s.recv(512); print('rcode', r[3] & 15)"`,
        `echo "${b.serverAddress} a.test" >> /etc/hosts`,
        `curl -sS -m 10 --cacert /tmp/egress-ca.pem https://a.test/hello; echo`,
        `curl -sS -m 10 http://a.test/hello; echo`,
        `timeout 8 bash -c "echo > /dev/tcp/${b.serverAddress}/8080" 2>/dev/null && echo "reached b:8080" || echo "no b:8080"`,
      ].join('\n'),
    );
    const lines = out.trim().split('\n');
    assert.equal(lines[0], '0', 'the commands ran as root');
    assert.ok(lines.includes('no b.test'), out);
    assert.ok(lines.includes('rcode 3'), `a query to another DNS server is answered NXDOMAIN by the policy resolver: ${out}`);
    // A forged hosts entry for an allowed name changes nothing: the proxy connects to a.test's own address.
    assert.equal(lines.filter((line) => line === 'hello from a').length, 2, out);
    assert.ok(lines.includes('no b:8080'), out);
    assert.deepEqual(await b.requests(), []);
  });

  test("a policy change reaches the running VM within a second, and the session's PUT updates it", async () => {
    const started = Date.now();
    const put = await call(server, 'PUT', `/v1/sessions/${sessionId}/egress`, { apiKey, json: { allowed_domains: ['b.test'] } });
    const tookMs = Date.now() - started;
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body.updated_vm_ids, [vmId]);
    assert.ok(tookMs < 1000, `the change took ${tookMs} ms`);
    await guest("sed -i '/a.test/d' /etc/hosts");
    const results = await fetchAll('http://a.test/hello', 'http://b.test/hello', 'https://b.test/hello');
    assert.equal(results.get('http://a.test/hello')!.exit, 6);
    assert.deepEqual(results.get('http://b.test/hello'), { exit: 0, status: '200', body: 'hello from b' });
    assert.deepEqual(results.get('https://b.test/hello'), { exit: 0, status: '200', body: 'hello from b' });
  });

  test('allow_http false refuses port 80 only', async () => {
    const put = await call(server, 'PUT', `/v1/vms/${vmId}/egress`, { apiKey, json: { allowed_domains: ['a.test'], allow_http: false } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.allow_http, false);
    const results = await fetchAll('http://a.test/hello', 'https://a.test/hello');
    assert.notEqual(results.get('http://a.test/hello')!.exit, 0, 'port 80 is refused');
    assert.deepEqual(results.get('https://a.test/hello'), { exit: 0, status: '200', body: 'hello from a' });
  });

  test('a paused VM, resumed, runs under its policy from its first moment (its new hypervisor is bound again)', async () => {
    assert.equal((await call(server, 'POST', `/v1/vms/${vmId}/pause`, { apiKey })).status, 200);
    const resumed = await call(server, 'POST', `/v1/vms/${vmId}/resume`, { apiKey });
    assert.equal(resumed.status, 200, resumed.text);
    // At once, not after a reconcile pass: the first request after the resume already meets the policy.
    const results = await fetchAll('https://b.test/hello', `https://${b.serverAddress}/hello`, 'https://a.test/hello');
    assert.equal(results.get('https://b.test/hello')!.exit, 6, 'b.test does not resolve');
    assert.notEqual(results.get(`https://${b.serverAddress}/hello`)!.exit, 0);
    assert.deepEqual(results.get('https://a.test/hello'), { exit: 0, status: '200', body: 'hello from a' });
    const policy = await call(server, 'GET', `/v1/vms/${vmId}/egress`, { apiKey });
    assert.equal(policy.body.enforced, true);
  });

  test('the egress log lists the attempts with their verdicts, with filters and paging; refusals are events', async () => {
    // The firewall's own verdicts (ports other than 53, 80 and 443 when proxied) arrive a moment after the packet.
    const all = await waitUntil('the port-80 refusal is in the log', async () => {
      const res = await call(server, 'GET', `/v1/vms/${vmId}/egress/log?limit=500`, { apiKey });
      assert.equal(res.status, 200, res.text);
      return res.body.items.some((e: any) => e.port === 80 && e.verdict === 'refused' && /http is closed/.test(e.reason)) && res;
    });
    const items = all.body.items as Array<Record<string, any>>;
    const allowed = items.find((e) => e.name === 'a.test' && e.scheme === 'http' && e.verdict === 'allowed');
    assert.ok(allowed, all.text);
    assert.equal(allowed.address, a.serverAddress);
    assert.equal(allowed.port, 80);
    assert.ok(allowed.bytes_received > 0 && allowed.bytes_sent > 0);
    assert.ok(items.find((e) => e.name === 'a.test' && e.scheme === 'https' && e.verdict === 'allowed'));
    assert.ok(items.find((e) => e.protocol === 'dns' && e.name === 'b.test' && e.verdict === 'refused'));
    assert.ok(items.find((e) => e.address === b.serverAddress && e.scheme === 'http' && e.verdict === 'refused'));
    assert.ok(
      items.find((e) => e.address === b.serverAddress && e.port === 8080 && e.verdict === 'refused'),
      all.text,
    );

    const refused = await call(server, 'GET', `/v1/vms/${vmId}/egress/log?verdict=refused&destination=b.test`, { apiKey });
    assert.ok(refused.body.items.length > 0 && refused.body.items.every((e: any) => e.verdict === 'refused' && e.name === 'b.test'), refused.text);
    const first = await call(server, 'GET', `/v1/vms/${vmId}/egress/log?limit=1`, { apiKey });
    assert.equal(first.body.items.length, 1);
    const second = await call(server, 'GET', `/v1/vms/${vmId}/egress/log?limit=1&cursor=${first.body.next_cursor}`, { apiKey });
    assert.ok(second.body.items[0].id < first.body.items[0].id);

    const events = (await listEventsAfter(server.services.database.db, 0, 10_000)).filter((e) => e.type === 'egress.refused' && e.data.vm_id === vmId);
    assert.ok(events.length >= 1 && events.length < items.filter((e) => e.verdict === 'refused').length, `rate-limited events: ${events.length}`);
  });

  test('the CLI reads and replaces a policy, and lists the log (sandbox egress get|set|log)', async () => {
    const home = makeHome(server.baseUrl);
    const env = home.env({ SANDBOXD_API_KEY: apiKey });
    const set = await runCli(
      ['--json', 'egress', 'set', vmId, '--allow-domain', 'a.test', '--allow-domain', '*.cdn.test', '--allow-cidr', `${b.serverAddress}/32`, '--no-http'],
      env,
    );
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(JSON.parse(set.stdout), {
      allow_package_managers: false,
      allow_http: false,
      allow_https: true,
      allowed_domains: ['a.test', '*.cdn.test'],
      allowed_cidrs: [`${b.serverAddress}/32`],
      allowed_ports: [],
      source: 'vm',
      enforced: true,
    });
    const get = await runCli(['egress', 'get', sessionId], env);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /domains:\s+b\.test/, "the session's own policy (set by its PUT)");
    const log = await runCli(['--json', 'egress', 'log', vmId, '--refused', '--limit', '3'], env);
    assert.equal(log.code, 0, log.stderr);
    const page = JSON.parse(log.stdout);
    assert.ok(page.items.length === 3 && page.items.every((e: any) => e.verdict === 'refused'), log.stdout);
  });

  test("another user's VM and session are 404; a bad domain or CIDR is 400", async () => {
    assert.equal((await call(server, 'GET', `/v1/vms/${vmId}/egress`, { apiKey: otherKey })).status, 404);
    assert.equal((await call(server, 'PUT', `/v1/vms/${vmId}/egress`, { apiKey: otherKey, json: {} })).status, 404);
    assert.equal((await call(server, 'GET', `/v1/vms/${vmId}/egress/log`, { apiKey: otherKey })).status, 404);
    assert.equal((await call(server, 'GET', `/v1/sessions/${sessionId}/egress`, { apiKey: otherKey })).status, 404);
    assert.equal((await call(server, 'PUT', `/v1/vms/${vmId}/egress`, { apiKey, json: { allowed_domains: ['not a domain'] } })).status, 400);
    assert.equal((await call(server, 'PUT', `/v1/vms/${vmId}/egress`, { apiKey, json: { allowed_cidrs: ['10.0.0.0/33'] } })).status, 400);
  });
});
