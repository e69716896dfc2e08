/**
 * The pieces of egress enforcement that read untrusted bytes or text: the TLS ClientHello parser (against real
 * ClientHellos that Node's TLS client sends), the HTTP request-target check, the DNS query check, the pin table,
 * the nft trace parser, and the policy's validation and name matching.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import tls from 'node:tls';
import { describe, test } from 'node:test';
import dnsPacket from 'dns-packet';
import {
  allowsAddress,
  allowsName,
  isOpenEgressPolicy,
  normalizeEgressPolicy,
  OPEN_EGRESS_POLICY,
  storedEgressPolicy,
  type EgressPolicy,
} from '../../src/core/egress-policy.ts';
import { hostParts, requestTarget } from '../../src/net/egress/http-forwarder.ts';
import { PinTable } from '../../src/net/egress/pin-table.ts';
import { standardQuery } from '../../src/net/egress/policy-resolver.ts';
import { applyScript } from '../../src/net/egress/ruleset.ts';
import { ENCRYPTED_CLIENT_HELLO_EXTENSION, parseClientHello } from '../../src/net/egress/tls-client-hello.ts';
import { TraceParser } from '../../src/net/egress/trace-monitor.ts';

/** The first bytes a TLS client sends for `servername` (captured by a plain TCP server). */
async function clientHello(servername: string | undefined): Promise<Buffer> {
  let received = Buffer.alloc(0);
  const server = net.createServer((socket) => {
    socket.on('data', (chunk) => {
      received = Buffer.concat([received, chunk]);
      if (parseClientHello(received).kind !== 'incomplete') socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => {
    const client = tls.connect({ host: '127.0.0.1', port, ...(servername ? { servername } : {}), rejectUnauthorized: false });
    client.on('error', () => resolve());
    client.on('close', () => resolve());
  });
  server.close();
  return received;
}

/** `hello` (one record, one ClientHello) with an extension appended, every length fixed up. */
function withExtension(hello: Buffer, type: number, body: Buffer): Buffer {
  const extension = Buffer.alloc(4 + body.length);
  extension.writeUInt16BE(type, 0);
  extension.writeUInt16BE(body.length, 2);
  body.copy(extension, 4);
  const out = Buffer.concat([hello, extension]);
  out.writeUInt16BE(out.length - 5, 3); // record length
  out.writeUIntBE(out.length - 9, 6, 3); // handshake length
  // The extensions block starts after session id, cipher suites and compression methods.
  let at = 9 + 34;
  at += 1 + out[at]!;
  at += 2 + out.readUInt16BE(at);
  at += 1 + out[at]!;
  out.writeUInt16BE(out.readUInt16BE(at) + extension.length, at);
  return out;
}

describe('TLS ClientHello', () => {
  test('the SNI of a real ClientHello, also when it arrives a byte at a time', async () => {
    const hello = await clientHello('a.test');
    assert.deepEqual(parseClientHello(hello), { kind: 'hello', serverName: 'a.test', encryptedClientHello: false });
    for (let length = 0; length < hello.length; length += 7) assert.equal(parseClientHello(hello.subarray(0, length)).kind, 'incomplete', `${length} bytes`);
  });

  test('no SNI (a connection to an address) is a hello without a name', async () => {
    assert.deepEqual(parseClientHello(await clientHello(undefined)), { kind: 'hello', serverName: null, encryptedClientHello: false });
  });

  test('a ClientHello offering ECH (extension 0xfe0d) says so; one with two server_name extensions is invalid', async () => {
    const hello = await clientHello('a.test');
    const ech = withExtension(hello, ENCRYPTED_CLIENT_HELLO_EXTENSION, Buffer.alloc(40, 1));
    assert.deepEqual(parseClientHello(ech), { kind: 'hello', serverName: 'a.test', encryptedClientHello: true });
    const sni = Buffer.from([0, 9, 0, 0, 6, ...Buffer.from('b.test')]);
    assert.equal(parseClientHello(withExtension(hello, 0, sni)).kind, 'invalid');
  });

  test('plain HTTP, garbage and a forged length are invalid, never a name', async () => {
    assert.equal(parseClientHello(Buffer.from('GET / HTTP/1.1\r\nHost: a.test\r\n\r\n')).kind, 'invalid');
    const hello = await clientHello('a.test');
    const forged = Buffer.from(hello);
    forged.writeUInt16BE(0xffff, 3); // a record longer than what arrives, but under the cap: still incomplete
    assert.equal(parseClientHello(forged).kind, 'incomplete');
    const truncated = Buffer.from(hello);
    truncated[5] = 2; // not a ClientHello
    assert.equal(parseClientHello(truncated).kind, 'invalid');
  });
});

describe('HTTP request targets', () => {
  test('origin form names its Host; the port and case do not matter', () => {
    assert.deepEqual(requestTarget('/a?b=1', ['User-Agent', 'x', 'HOST', ' A.Test:80 ']), { host: 'A.Test:80', path: '/a?b=1' });
    assert.deepEqual(hostParts('A.Test:80'), { name: 'a.test', literalAddress: null });
    assert.deepEqual(hostParts('203.0.113.7'), { name: null, literalAddress: '203.0.113.7' });
    assert.deepEqual(requestTarget('/', []), { host: null, path: '/' }, 'no Host: refused later, by the decision');
  });

  test('an absolute-form target must name the Host; it goes on in origin form', () => {
    assert.deepEqual(requestTarget('http://a.test/x?y', ['Host', 'a.test']), { host: 'a.test', path: '/x?y' });
    assert.deepEqual(requestTarget('http://A.TEST:80/x', ['Host', 'a.test']), { host: 'a.test', path: '/x' });
    for (const [target, host] of [
      ['http://other.test/', 'a.test'],
      ['http://a.test@other.test/', 'a.test'],
      ['http://u:p@a.test/', 'a.test'],
      ['https://a.test/', 'a.test'],
      ['ftp://a.test/', 'a.test'],
      ['a.test:443', 'a.test'],
      ['http://other.test/', ''],
    ] as const) {
      assert.ok('refused' in requestTarget(target, host ? ['Host', host] : []), `${target} with Host ${host}`);
    }
    assert.ok('refused' in requestTarget('/', ['Host', 'a.test', 'host', 'other.test']), 'two Host headers');
  });
});

describe('DNS queries', () => {
  const query = (overrides: Partial<dnsPacket.Packet> = {}) =>
    dnsPacket.encode({ type: 'query', id: 7, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name: 'a.test', class: 'IN' }], ...overrides });
  const check = (message: Buffer) => standardQuery(message, dnsPacket.decode(message));

  test('a standard query is re-encoded: its one question and EDNS without options, under a new id', () => {
    const message = query({
      additionals: [
        {
          type: 'OPT',
          name: '.',
          udpPayloadSize: 1232,
          flags: dnsPacket.DNSSEC_OK,
          options: [{ code: 65001, data: Buffer.from('exfiltrated data') }],
        } as never,
      ],
    });
    const result = check(message);
    assert.ok('upstream' in result);
    const upstream = dnsPacket.decode(result.upstream);
    assert.deepEqual(upstream.questions, [{ type: 'A', name: 'a.test', class: 'IN' }]);
    const opt = upstream.additionals?.[0] as dnsPacket.OptAnswer;
    assert.equal(opt.udpPayloadSize, 1232);
    assert.equal(opt.flag_do, true);
    assert.deepEqual(opt.options, []);
    assert.equal(result.upstream.includes(Buffer.from('exfiltrated data')), false);
  });

  test('two questions, answers, other records, other opcodes and classes are refused', () => {
    const FORMERR = 1;
    const REFUSED = 5;
    assert.deepEqual(
      check(
        query({
          questions: [
            { type: 'A', name: 'a.test' },
            { type: 'A', name: 'secret.attacker.test' },
          ],
        }),
      ),
      { rcode: FORMERR },
    );
    assert.deepEqual(check(query({ answers: [{ type: 'A', name: 'a.test', data: '1.2.3.4' }] })), { rcode: FORMERR });
    assert.deepEqual(check(query({ authorities: [{ type: 'NS', name: 'a.test', data: 'ns.test' }] })), { rcode: FORMERR });
    assert.deepEqual(check(query({ additionals: [{ type: 'TXT', name: 'x.test', data: 'payload' }] })), { rcode: FORMERR });
    assert.deepEqual(check(query({ questions: [{ type: 'A', name: 'a.test', class: 'CH' }] })), { rcode: REFUSED });
    const update = query();
    update.writeUInt16BE((5 << 11) | dnsPacket.RECURSION_DESIRED, 2); // opcode UPDATE
    assert.deepEqual(check(update), { rcode: REFUSED });
  });
});

describe('pins', () => {
  test('bounded per VM: the least recently used name goes first, and its addresses are reported dropped', () => {
    const pins = new PinTable(3, 2);
    const now = 1_000_000;
    for (let i = 1; i <= 3; i++) pins.pin(`n${i}.test`, [{ address: `203.0.113.${i}`, ttlSeconds: 60 }], now);
    assert.equal(pins.addressOf('n1.test', now), '203.0.113.1'); // n1 used: n2 is now the oldest
    const change = pins.pin(
      'n4.test',
      [
        { address: '203.0.113.4', ttlSeconds: 60 },
        { address: '203.0.113.1', ttlSeconds: 60 },
        { address: '203.0.113.9', ttlSeconds: 60 },
      ],
      now,
    );
    assert.equal(pins.size, 3);
    assert.deepEqual(change.dropped, ['203.0.113.2']);
    assert.deepEqual(
      change.fresh.map((p) => p.address),
      ['203.0.113.4'],
      'at most 2 addresses per name; .1 was pinned already',
    );
    assert.equal(pins.addressOf('n2.test', now), undefined);
    assert.equal(pins.nameOf('203.0.113.1', now), 'n1.test');
    assert.equal(pins.addressOf('n1.test', now + 61_000), undefined, 'expired');
  });
});

describe('nft trace lines', () => {
  const parser = new TraceParser('sandboxd_egress_12345678');
  test('a packet and its verdict make one attempt; other tables and unknown packets are ignored', () => {
    assert.equal(
      parser.push(
        'trace id 1a inet sandboxd_egress_12345678 f_vm_1 packet: oif "eth0" ip saddr 10.1.1.1 ip daddr 203.0.113.9 ip protocol tcp tcp sport 4000 tcp dport 22 tcp flags == syn',
      ),
      null,
    );
    assert.deepEqual(
      parser.push('trace id 1a inet sandboxd_egress_12345678 f_vm_1 rule meta l4proto tcp meta nftrace set 1 reject with tcp reset (verdict drop)'),
      {
        key: 'vm_1',
        protocol: 'tcp',
        address: '203.0.113.9',
        port: 22,
        verdict: 'refused',
      },
    );
    parser.push(
      'trace id 2b inet sandboxd_egress_12345678 f_vm_1 packet: oif "eth0" ip saddr 10.1.1.1 ip daddr 203.0.113.10 ip protocol udp udp sport 4000 udp dport 123',
    );
    assert.deepEqual(parser.push('trace id 2b inet sandboxd_egress_12345678 f_vm_1 unknown rule handle 44 (verdict accept)'), {
      key: 'vm_1',
      protocol: 'udp',
      address: '203.0.113.10',
      port: 123,
      verdict: 'allowed',
    });
    assert.equal(parser.push('trace id 3c inet sandboxd_guard vm_egress packet: ip daddr 1.1.1.1 ip protocol tcp tcp dport 80'), null);
    assert.equal(parser.push('trace id 3c inet sandboxd_guard vm_egress rule counter (verdict drop)'), null);
  });
});

describe('policies', () => {
  const policy = (overrides: Partial<EgressPolicy>) =>
    normalizeEgressPolicy({ allowPackageManagers: false, allowHttp: true, allowHttps: true, allowedDomains: [], allowedCidrs: [], ...overrides });

  test('names: exact, subdomain wildcards, package managers; case and trailing dots do not matter', () => {
    const p = policy({ allowedDomains: ['A.test.', '*.cdn.test'] });
    assert.deepEqual(p.allowedDomains, ['a.test', '*.cdn.test']);
    assert.ok(allowsName(p, 'a.test') && allowsName(p, 'A.TEST.') && allowsName(p, 'x.cdn.test'));
    assert.ok(!allowsName(p, 'b.test') && !allowsName(p, 'cdn.test') && !allowsName(p, 'x.a.test') && !allowsName(p, 'evilcdn.test'));
    assert.ok(!allowsName(p, 'pypi.org'));
    assert.ok(allowsName(policy({ allowPackageManagers: true }), 'pypi.org') && allowsName(policy({ allowPackageManagers: true }), 'deb.debian.org'));
  });

  test('CIDRs are canonical and matched on the address; bad entries are 400', () => {
    const p = policy({ allowedCidrs: ['203.0.113.77/24', '198.51.100.1'] });
    assert.deepEqual(p.allowedCidrs, ['203.0.113.0/24', '198.51.100.1/32']);
    assert.ok(allowsAddress(p, '203.0.113.200') && !allowsAddress(p, '203.0.114.1') && allowsAddress(p, '198.51.100.1'));
    for (const bad of ['10.0.0.0/33', 'a.b.c.d', '::1/128', '1.2.3.4/', '1.2.3.4/8/8'])
      assert.throws(() => policy({ allowedCidrs: [bad] }), { code: 'BAD_REQUEST' }, bad);
    for (const bad of ['', 'has space.test', '1.2.3.4', '*.', '**.a.test', 'a..test'])
      assert.throws(() => policy({ allowedDomains: [bad] }), { code: 'BAD_REQUEST' }, bad);
  });

  test('allowed_ports: canonical, validated, bounded; 80/443 TCP and 53 are refused; stored policies without them read as none', () => {
    assert.deepEqual(policy({ allowedPorts: ['443/UDP', ' 22/tcp', '5432/tcp', '22/tcp'] }).allowedPorts, ['22/tcp', '5432/tcp', '443/udp']);
    for (const bad of ['80/tcp', '443/tcp', '53/udp', '53/tcp', '0/tcp', '65536/udp', '22', 'tcp/22', '22/sctp', '22-25/tcp'])
      assert.throws(() => policy({ allowedPorts: [bad] }), { code: 'BAD_REQUEST' }, bad);
    assert.throws(() => policy({ allowedPorts: Array.from({ length: 51 }, (_, i) => `${1000 + i}/tcp`) }), { code: 'BAD_REQUEST' });
    assert.deepEqual(
      storedEgressPolicy('{"allowPackageManagers":false,"allowHttp":true,"allowHttps":true,"allowedDomains":["a.test"],"allowedCidrs":[]}').allowedPorts,
      [],
    );
  });

  test('the firewall opens a pinned address only on the named ports; QUIC follows allow_https', () => {
    const rules = (p: EgressPolicy) =>
      applyScript(
        'sandboxd_egress_test',
        {
          key: 'vm_1',
          classifier: { cgroupPath: 'sandboxd/vm-1', level: 2 },
          ports: { dnsUdp: 1, dnsTcp: 2, http: 3, https: 4 },
          allowHttp: p.allowHttp,
          allowHttps: p.allowHttps,
          cidrs: p.allowedCidrs,
          openPorts: p.allowedPorts.map((e) => ({ port: Number(e.split('/')[0]), protocol: e.split('/')[1] as 'tcp' | 'udp' })),
          pinned: [],
        },
        [],
      );
    const plain = rules(policy({ allowedDomains: ['a.test'] }));
    assert.doesNotMatch(plain, /daddr @p_vm_1 (meta|accept)/, 'no rule admits a pinned address on any port');
    assert.doesNotMatch(plain, /udp dport 443 .*reject/, 'QUIC to CIDRs stays as open as allow_https');
    const ports = rules(policy({ allowedDomains: ['a.test'], allowedPorts: ['22/tcp', '443/udp'] }));
    assert.match(ports, /ip daddr @p_vm_1 tcp dport \{ 22 \} meta nftrace set 1 accept/);
    assert.match(ports, /ip daddr @p_vm_1 udp dport \{ 443 \} meta nftrace set 1 accept/);
    assert.match(rules(policy({ allowedCidrs: ['203.0.113.0/24'], allowHttps: false })), /udp dport 443 meta nftrace set 1 reject/);
    assert.doesNotMatch(
      rules(policy({ allowedCidrs: ['203.0.113.0/24'], allowHttps: false, allowedPorts: ['443/udp'] })),
      /udp dport 443 meta nftrace set 1 reject/,
    );
  });

  test('only the open policy skips enforcement', () => {
    assert.ok(isOpenEgressPolicy(OPEN_EGRESS_POLICY));
    assert.ok(!isOpenEgressPolicy(policy({ allowedDomains: ['*'] })));
    assert.ok(!isOpenEgressPolicy({ ...OPEN_EGRESS_POLICY, allowHttp: false }));
  });
});
