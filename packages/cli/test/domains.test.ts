// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * `sandbox domains` as a user runs it (a child process), against the real server and a DNS server on
 * loopback: add prints the TXT record to create, verify exits 1 until the record is there, ls and rm.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDnsServer, type DnsServer } from '../../server/test/helpers/dns-server.ts';
import { call, startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { makeHome, runCli, type CliHome } from './run-cli.ts';

describe('sandbox domains', () => {
  let dns: DnsServer;
  let server: TestServer;
  let home: CliHome;
  let env: NodeJS.ProcessEnv;
  let sessionId: string;

  before(async () => {
    dns = await startDnsServer();
    server = await startTestServer({ config: { dnsServers: [dns.address] } });
    const gail = await server.createUserWithKey('gail');
    home = makeHome(server.baseUrl);
    env = home.env({ SANDBOXD_API_KEY: gail.apiKey });
    sessionId = (await call(server, 'POST', '/v1/sessions/session', { apiKey: gail.apiKey, json: {} })).body.session_id;
  });
  after(async () => {
    home?.remove();
    await server?.close();
    await dns?.close();
  });

  test('add prints the TXT record; verify exits 1 until it exists, then 0; ls lists it; rm deletes it', async () => {
    const added = await runCli(['domains', 'add', 'cli.example.com', '--port', '3000', '--session', sessionId], env);
    assert.equal(added.code, 0, added.stderr);
    const record = /_sandboxd-challenge\.cli\.example\.com\. TXT "(sandboxd-verify-[a-z2-7]+)"/.exec(added.stdout);
    assert.ok(record, added.stdout);
    const id = /\((cd_[a-z2-7]+)\)/.exec(added.stdout)![1]!;
    assert.match(added.stdout, new RegExp(`sandbox domains verify ${id}`));

    const early = await runCli(['domains', 'verify', id], env);
    assert.equal(early.code, 1, early.stderr);
    assert.match(early.stdout, /not verified yet: no TXT record at _sandboxd-challenge\.cli\.example\.com/);

    dns.setTxt('_sandboxd-challenge.cli.example.com', [record[1]!]);
    const verified = await runCli(['domains', 'verify', id], env);
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, new RegExp(`cli\\.example\\.com is verified: it serves ${sessionId}:3000 at http://cli\\.example\\.com:\\d+/`));

    const listed = await runCli(['--json', 'domains', 'ls'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(
      listed.json.map((d: { id: string; status: string }) => [d.id, d.status]),
      [[id, 'verified']],
    );
    const text = await runCli(['domains', 'ls'], env);
    assert.match(text.stdout, /^ID\s+DOMAIN\s+STATUS\s+SERVES/);
    assert.match(text.stdout, new RegExp(`${id}\\s+cli\\.example\\.com\\s+verified`));

    const removed = await runCli(['domains', 'rm', id], env);
    assert.equal(removed.code, 0, removed.stderr);
    assert.match(removed.stdout, /Deleted cli\.example\.com/);
    assert.equal((await runCli(['domains', 'rm', id], env)).code, 4, 'not found');
  });

  test('usage mistakes and refused input exit 2 with the reason', async () => {
    const neither = await runCli(['domains', 'add', 'x.example.com'], env);
    assert.equal(neither.code, 2);
    assert.match(neither.stderr, /--share ID, or --port PORT/);
    const both = await runCli(['domains', 'add', 'x.example.com', '--share', 'shr_x', '--port', '80'], env);
    assert.equal(both.code, 2);
    const withApp = await runCli(['domains', 'add', 'x.example.com', '--app', 'hello', '--port', '80'], env);
    assert.equal(withApp.code, 2);
    assert.match(withApp.stderr, /not --port and --app/);
    const noApp = await runCli(['domains', 'add', 'x.example.com', '--app', 'no-such-app'], env);
    assert.equal(noApp.code, 4, noApp.stderr);
    assert.match(noApp.stderr, /app no-such-app/);
    const ip = await runCli(['domains', 'add', '10.1.2.3', '--port', '80', '--session', sessionId], env);
    assert.equal(ip.code, 2);
    assert.match(ip.stderr, /domain: domain must be a domain name, not an IP address/);
  });
});
