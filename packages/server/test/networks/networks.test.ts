/**
 * Private networks on real VMs (issue 38): user A makes a network and two VMs on it (one joins at create, one
 * later); they reach each other over TCP by `<vm name>.<net>.internal` and by address; a VM of A not on the network
 * and a VM of user B (on B's own network, which has the same /24) reach neither; B gets 404 on A's network and its
 * members; a member under a restricted egress policy still reaches members (port 80 too, which its policy would
 * send to the egress proxy); a paused member keeps its address and works again once resumed; after a VM leaves
 * it reaches nothing; a network with members cannot be deleted. Measures latency
 * (connect + a small request, p50 of 20) and throughput (a 50 MiB transfer) between two members.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const TOKEN = `net-${randomBytes(8).toString('hex')}`;
const PORT = 8000;

/** Starts python3's HTTP server on `port` in the background and waits until it listens (python starts slowly under TCG). */
const serveCommand = (port: number) =>
  `(setsid python3 -m http.server ${port} --directory /srv/net >/dev/null 2>&1 < /dev/null &) && ` +
  `up=0; for i in $(seq 1 150); do if (exec 3<>/dev/tcp/127.0.0.1/${port}) 2>/dev/null; then up=1; break; fi; sleep 0.2; done; [ $up = 1 ]`;

/** A python3 program that fetches `url` and prints `OK <body>` or `FAIL <error>`. */
function fetchScript(url: string, timeoutSeconds = 10): string {
  return [
    'import urllib.request, sys',
    'try:',
    `    print("OK " + urllib.request.urlopen(${JSON.stringify(url)}, timeout=${timeoutSeconds}).read().decode().strip())`,
    'except Exception as error:',
    '    print("FAIL " + type(error).__name__ + " " + str(error))',
  ].join('\n');
}

/** Latency (connect + GET of a small file, 20 times) and throughput (GET of a 50 MiB file) from a member to `host`. */
function benchScript(host: string): string {
  return [
    'import http.client, time, statistics, json',
    'times = []',
    'for _ in range(20):',
    '    t = time.perf_counter()',
    `    c = http.client.HTTPConnection(${JSON.stringify(host)}, ${PORT}, timeout=30)`,
    '    c.request("GET", "/hello.txt")',
    '    c.getresponse().read()',
    '    c.close()',
    '    times.append((time.perf_counter() - t) * 1000)',
    't = time.perf_counter()',
    `c = http.client.HTTPConnection(${JSON.stringify(host)}, ${PORT}, timeout=120)`,
    'c.request("GET", "/big.bin")',
    'r = c.getresponse()',
    'n = 0',
    'while True:',
    '    b = r.read(1 << 20)',
    '    if not b: break',
    '    n += len(b)',
    'seconds = time.perf_counter() - t',
    'print(json.dumps({"p50_ms": statistics.median(times), "min_ms": min(times), "bytes": n, "seconds": seconds, "mib_per_s": n / seconds / 2**20}))',
  ].join('\n');
}

describe('private networks on real VMs', { timeout: 20 * 60_000 }, () => {
  let server: TestServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let networkId: string;
  const vms = {} as Record<'web' | 'client' | 'outsider' | 'bob', { vm_id: string; session_id: string }>;

  before(async () => {
    server = await startTestServer();
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
  });
  after(() => server?.close());

  const as = (who: { apiKey: string }) => ({ apiKey: who.apiKey });
  const startVm = async (who: { apiKey: string }, json: Record<string, unknown>) => {
    const answer = await call(server, 'POST', '/v1/vms', { ...as(who), json: { vcpu_count: 1, vm_lifetime_seconds: 1800, ...json } });
    assert.equal(answer.status, 200, answer.text);
    return answer.body as { vm_id: string; session_id: string };
  };
  const run = async (who: { apiKey: string }, sessionId: string, language: 'bash' | 'python', code: string) => {
    const answer = await call(server, 'POST', '/execute', {
      ...as(who),
      json: { session_id: sessionId, language, ...(language === 'bash' ? { command: code } : { code }), timeout: 180 },
    });
    assert.equal(answer.status, 200, answer.text);
    return answer.body as { exit_code: number; stdout: string; stderr: string };
  };
  const fetchFrom = async (who: { apiKey: string }, vm: keyof typeof vms, url: string) =>
    (await run(who, vms[vm].session_id, 'python', fetchScript(url))).stdout.trim();

  test('create, list, get; names are unique; another user gets 404 on all of it', async () => {
    const created = await call(server, 'POST', '/v1/networks', { ...as(alice), json: { name: 'lan' } });
    assert.equal(created.status, 201, created.text);
    networkId = created.body.network_id;
    assert.match(networkId, /^net-[0-9a-f]{20}$/);
    assert.equal(created.body.cidr, '10.250.0.0/24');
    assert.deepEqual(created.body.members, []);
    assert.equal((await call(server, 'POST', '/v1/networks', { ...as(alice), json: { name: 'lan' } })).status, 409);
    assert.equal((await call(server, 'POST', '/v1/networks', { ...as(alice), json: { name: 'Bad_Name' } })).status, 422);
    assert.deepEqual(
      (await call(server, 'GET', '/v1/networks', as(alice))).body.map((n: { network_id: string }) => n.network_id),
      [networkId],
    );
    assert.equal((await call(server, 'GET', '/v1/networks/lan', as(alice))).body.network_id, networkId, 'a network is named by id or name');
    assert.equal((await call(server, 'GET', `/v1/networks/${networkId}`, as(bob))).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/networks/${networkId}`, as(bob))).status, 404);
    assert.deepEqual((await call(server, 'GET', '/v1/networks', as(bob))).body, []);
    // Bob's own network of the same name gets the same /24: addresses are per user.
    const bobs = await call(server, 'POST', '/v1/networks', { ...as(bob), json: { name: 'lan' } });
    assert.equal(bobs.status, 201, bobs.text);
    assert.equal(bobs.body.cidr, '10.250.0.0/24');
    const stolen = await call(server, 'POST', '/v1/vms', { ...as(bob), json: { vcpu_count: 1, networks: [networkId] } });
    assert.equal(stolen.status, 404, `joining another user's network at create: ${stolen.text}`);
  });

  test('two members reach each other by name and address; a non-member and another user reach neither', async (t) => {
    let started = Date.now();
    vms.web = await startVm(alice, { name: 'web', networks: ['lan'] });
    t.diagnostic(`a VM on a network started in ${Date.now() - started} ms`);
    started = Date.now();
    // Under a restricted egress policy: traffic to members is not "leaving", and the relay comes before the egress proxy (port 80).
    vms.client = await startVm(alice, { name: 'client', egress_policy: { allowed_domains: ['allowed.test'] } });
    vms.outsider = await startVm(alice, { name: 'outsider' });
    // Bob's VM joins his network through its session (`networks` of the session, joined by the VM its first execute starts).
    const bobSession = await call(server, 'POST', '/v1/sessions/session', {
      ...as(bob),
      json: { vcpu_count: 1, vm_lifetime_seconds: 1800, networks: ['lan'] },
    });
    assert.equal(bobSession.status, 200, bobSession.text);
    assert.equal((await run(bob, bobSession.body.session_id, 'bash', 'true')).exit_code, 0);
    const bobVm = ((await call(server, 'GET', '/v1/vms', as(bob))).body as { vm_id: string; session_id: string; status: string }[]).find(
      (vm) => vm.session_id === bobSession.body.session_id && vm.status === 'active',
    );
    assert.ok(bobVm, "Bob's session has a VM");
    vms.bob = { vm_id: bobVm.vm_id, session_id: bobVm.session_id };
    const bobsNetwork = (await call(server, 'GET', '/v1/networks/lan', as(bob))).body;
    assert.deepEqual(
      bobsNetwork.members.map((m: { vm_id: string; address: string }) => [m.vm_id, m.address]),
      [[bobVm.vm_id, '10.250.0.2']],
      "the session's VM joined its network at start",
    );
    t.diagnostic(`three more VMs started in ${Date.now() - started} ms`);

    // The second member joins later, by the members route; Bob can neither add his VM to Alice's network nor Alice's VM to his.
    assert.equal((await call(server, 'POST', `/v1/networks/${networkId}/members`, { ...as(bob), json: { vm_id: vms.bob.vm_id } })).status, 404);
    assert.equal((await call(server, 'POST', `/v1/networks/${networkId}/members`, { ...as(bob), json: { vm_id: vms.client.vm_id } })).status, 404);
    assert.equal((await call(server, 'POST', `/v1/networks/lan/members`, { ...as(bob), json: { vm_id: vms.client.vm_id } })).status, 404);
    const joined = await call(server, 'POST', `/v1/networks/${networkId}/members`, { ...as(alice), json: { vm_id: vms.client.vm_id } });
    assert.equal(joined.status, 200, joined.text);
    assert.equal(joined.body.address, '10.250.0.3');
    assert.deepEqual(joined.body.hostnames, ['client.lan.internal', `${vms.client.vm_id}.lan.internal`]);
    const record = (await call(server, 'GET', `/v1/networks/${networkId}`, as(alice))).body;
    assert.deepEqual(
      record.members.map((m: { vm_id: string; address: string }) => [m.vm_id, m.address]),
      [
        [vms.web.vm_id, '10.250.0.2'],
        [vms.client.vm_id, '10.250.0.3'],
      ],
    );

    for (const [vm, dir] of [
      ['web', 'web'],
      ['client', 'client'],
    ] as const) {
      const served = await run(
        alice,
        vms[vm].session_id,
        'bash',
        `mkdir -p /srv/net && echo ${TOKEN}-${dir} > /srv/net/hello.txt && head -c 52428800 /dev/zero > /srv/net/big.bin && ` +
          `grep -c internal /etc/hosts && ${serveCommand(PORT)}`,
      );
      assert.equal(served.exit_code, 0, served.stderr);
    }
    const hosts = await run(alice, vms.client.session_id, 'bash', 'cat /etc/hosts');
    assert.match(hosts.stdout, /10\.250\.0\.2 web\.lan\.internal/);

    assert.equal(await fetchFrom(alice, 'client', `http://web.lan.internal:${PORT}/hello.txt`), `OK ${TOKEN}-web`, 'by name');
    assert.equal(await fetchFrom(alice, 'client', `http://10.250.0.2:${PORT}/hello.txt`), `OK ${TOKEN}-web`, 'by address');
    assert.equal(await fetchFrom(alice, 'client', `http://${vms.web.vm_id}.lan.internal:${PORT}/hello.txt`), `OK ${TOKEN}-web`, 'by VM id');
    assert.equal(await fetchFrom(alice, 'web', `http://client.lan.internal:${PORT}/hello.txt`), `OK ${TOKEN}-client`, 'the other way');
    const port80 = await run(alice, vms.web.session_id, 'bash', serveCommand(80));
    assert.equal(port80.exit_code, 0, port80.stderr);
    assert.equal(await fetchFrom(alice, 'client', 'http://web.lan.internal/hello.txt'), `OK ${TOKEN}-web`, 'port 80 of a member, past the egress proxy');

    for (const url of [`http://10.250.0.2:${PORT}/hello.txt`, `http://10.250.0.3:${PORT}/hello.txt`, `http://web.lan.internal:${PORT}/hello.txt`]) {
      assert.match(await fetchFrom(alice, 'outsider', url), /^FAIL /, `a VM of Alice's not on the network: ${url}`);
      assert.match(await fetchFrom(bob, 'bob', url), /^FAIL /, `Bob's VM on his own network of the same /24: ${url}`);
    }
    assert.doesNotMatch((await run(bob, vms.bob.session_id, 'bash', 'cat /etc/hosts')).stdout, /client/, "Bob's hosts name only his own members");

    const bench = await run(alice, vms.client.session_id, 'python', benchScript('web.lan.internal'));
    assert.equal(bench.exit_code, 0, bench.stderr);
    const numbers = JSON.parse(bench.stdout.trim().split('\n').at(-1)!) as {
      p50_ms: number;
      min_ms: number;
      bytes: number;
      seconds: number;
      mib_per_s: number;
    };
    assert.equal(numbers.bytes, 50 * 2 ** 20);
    t.diagnostic(
      `member to member: connect + small request p50 ${numbers.p50_ms.toFixed(1)} ms (min ${numbers.min_ms.toFixed(1)}); 50 MiB in ${numbers.seconds.toFixed(2)} s = ${numbers.mib_per_s.toFixed(1)} MiB/s`,
    );
  });

  test('a paused member keeps its address and is reached again once resumed', async (t) => {
    const paused = await call(server, 'POST', `/v1/vms/${vms.web.vm_id}/pause`, as(alice));
    assert.equal(paused.status, 200, paused.text);
    const member = (await call(server, 'GET', `/v1/networks/${networkId}`, as(alice))).body.members.find((m: { vm_id: string }) => m.vm_id === vms.web.vm_id);
    assert.deepEqual([member?.status, member?.address], ['paused', '10.250.0.2']);
    assert.match(await fetchFrom(alice, 'client', `http://10.250.0.2:${PORT}/hello.txt`), /^FAIL /, 'nothing answers for a paused member');
    const started = Date.now();
    const resumed = await call(server, 'POST', `/v1/vms/${vms.web.vm_id}/resume`, as(alice));
    assert.equal(resumed.status, 200, resumed.text);
    t.diagnostic(`resumed in ${Date.now() - started} ms`);
    assert.equal(await fetchFrom(alice, 'client', `http://web.lan.internal:${PORT}/hello.txt`), `OK ${TOKEN}-web`, 'its server, kept by the pause');
    assert.equal(await fetchFrom(alice, 'web', `http://client.lan.internal:${PORT}/hello.txt`), `OK ${TOKEN}-client`, 'and its own rules, bound again');
  });

  test('a member that leaves reaches nothing; a network with members is not deleted', async () => {
    assert.equal((await call(server, 'DELETE', `/v1/networks/${networkId}/members/${vms.client.vm_id}`, as(bob))).status, 404);
    assert.equal((await call(server, 'DELETE', `/v1/networks/${networkId}/members/${vms.client.vm_id}`, as(alice))).status, 204);
    assert.equal((await call(server, 'DELETE', `/v1/networks/${networkId}/members/${vms.client.vm_id}`, as(alice))).status, 404, 'not a member any more');
    assert.match(await fetchFrom(alice, 'client', `http://10.250.0.2:${PORT}/hello.txt`), /^FAIL /, 'after it left');
    assert.doesNotMatch((await run(alice, vms.client.session_id, 'bash', 'cat /etc/hosts')).stdout, /lan\.internal/, 'its hosts block is gone');
    assert.doesNotMatch((await run(alice, vms.web.session_id, 'bash', 'cat /etc/hosts')).stdout, /client\.lan/, "the others' hosts lose it");

    assert.equal((await call(server, 'DELETE', `/v1/networks/${networkId}`, as(alice))).status, 409);
    assert.equal((await call(server, 'DELETE', `/v1/vms/${vms.web.vm_id}`, as(alice))).status, 200);
    assert.deepEqual((await call(server, 'GET', `/v1/networks/${networkId}`, as(alice))).body.members, [], 'an ended VM is no member');
    assert.equal((await call(server, 'DELETE', `/v1/networks/${networkId}`, as(alice))).status, 204);
    assert.equal((await call(server, 'GET', `/v1/networks/${networkId}`, as(alice))).status, 404);
    const events = await call(server, 'GET', '/v1/events?limit=100', as(alice));
    if (events.status === 200) {
      const types = JSON.stringify(events.body);
      for (const type of ['network.created', 'network.member_joined', 'network.member_left', 'network.deleted']) assert.ok(types.includes(type), type);
    }
  });
});
