/**
 * The vault on a real VM. api.test and other.test are HTTPS servers in network namespaces the test creates (a
 * test CA the server trusts through SANDBOXD_VAULT_UPSTREAM_CA_FILE), resolved by a DNS server the test runs
 * (helpers/vault-network.ts). A secret bound to api.test: the guest's env holds only a placeholder, and api.test
 * receives the real value at the secret's injection point (curl, Node, Python; `Authorization: Bearer`) through
 * sandboxd's TLS interception, which the guest trusts with no flag; api.test echoes the headers it got, and the
 * guest sees the value masked; a placeholder elsewhere (the query, Basic credentials) is not swapped; a
 * placeholder sent to other.test goes out unchanged, and over plain HTTP it is flagged; each use is in the
 * vault's request log; a rotation reaches the running VM's next request; values are never returned nor
 * stored in the clear; another user sees none of it. The security regressions are in test/security/vault.test.ts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { listEventsAfter } from '../../src/store/events-store.ts';
import type { NetnsWebServer } from '../helpers/netns-web.ts';
import type { TestCa } from '../helpers/test-ca.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { startVaultNetwork, type VaultNetwork } from '../helpers/vault-network.ts';
import { waitUntil } from '../helpers/wait.ts';

const skip =
  process.getuid?.() !== 0 ? 'needs root (nftables, cgroups, network namespaces)' : spawnSync('nft', ['--version']).status !== 0 ? 'needs nft' : false;

const SECRET = 'sk-live-7Hq2-vault-test-value';
const ROTATED = 'sk-live-rotated-9Zk1';

describe('the vault: secrets swapped in on the way out, never in the VM', { skip }, () => {
  let server: TestServer;
  let apiKey: string;
  let otherKey: string;
  let network: VaultNetwork;
  let ca: TestCa;
  let api: NetnsWebServer;
  let vaultId: string;
  let sessionId: string;
  let vmId: string;

  async function guest(command: string): Promise<string> {
    const res = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command, timeout: 60 } });
    assert.equal(res.status, 200, res.text);
    vmId = res.body.vm_id;
    return String(res.body.stdout);
  }

  /** The headers api.test or other.test saw, as its /echo-headers answered them to the guest. */
  function echoed(stdout: string): Record<string, string> {
    return JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, string>;
  }

  /** What a value looks like in what a bound host echoes: masked, with its length. */
  const masked = (value: string) => '*'.repeat(value.length);

  before(async () => {
    network = await startVaultNetwork([{ names: ['api.test'] }, { names: ['other.test'] }]);
    ({ ca } = network);
    [api] = network.upstreams as [NetnsWebServer];
    server = await startTestServer({ config: network.config });
    ({ apiKey } = await server.createUserWithKey('vault', 'pro'));
    ({ apiKey: otherKey } = await server.createUserWithKey('vault-other', 'pro'));
  });

  after(async () => {
    await server?.close();
    await network?.stop();
  });

  test('a vault is created with a secret bound to api.test; no answer carries the value, the store holds it sealed', async () => {
    const created = await call(server, 'POST', '/v1/vaults', {
      apiKey,
      json: { name: 'ci', description: 'CI tokens', secrets: [{ name: 'API_TOKEN', value: SECRET, allowed_hosts: ['API.test'] }] },
    });
    assert.equal(created.status, 201, created.text);
    vaultId = created.body.id;
    assert.match(vaultId, /^vlt_/);
    assert.deepEqual(
      created.body.secrets.map((s: any) => [s.name, s.allowed_hosts, s.inject]),
      [['API_TOKEN', ['api.test'], { type: 'bearer' }]],
    );
    assert.ok(!created.text.includes(SECRET));
    const listed = await call(server, 'GET', '/v1/vaults', { apiKey });
    assert.equal(listed.body.length, 1);
    assert.ok(!listed.text.includes(SECRET));
    const rows = await server.services.database.db.selectFrom('vault_secrets').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(SECRET), 'sealed at rest');
    const audit = await call(server, 'GET', '/v1/audit', { apiKey });
    assert.ok(!audit.text.includes(SECRET));
  });

  test('bad input is refused with nothing written: a host "*", a duplicate name, another user\'s vault', async () => {
    const star = await call(server, 'POST', '/v1/vaults', { apiKey, json: { name: 'x', secrets: [{ name: 'K', value: 'v', allowed_hosts: ['*'] }] } });
    assert.equal(star.status, 400, star.text);
    const badName = await call(server, 'POST', '/v1/vaults', {
      apiKey,
      json: { name: 'y', secrets: [{ name: 'not-a-var', value: 'v', allowed_hosts: ['a.test'] }] },
    });
    assert.equal(badName.status, 422, badName.text);
    assert.equal((await call(server, 'POST', '/v1/vaults', { apiKey, json: { name: 'ci' } })).status, 409);
    assert.equal((await call(server, 'GET', '/v1/vaults', { apiKey })).body.length, 1, 'nothing half-written');
    assert.equal((await call(server, 'GET', `/v1/vaults/${vaultId}`, { apiKey: otherKey })).status, 404);
    assert.equal((await call(server, 'GET', `/v1/vaults/${vaultId}/request-logs`, { apiKey: otherKey })).status, 404);
    assert.equal(
      (await call(server, 'PUT', `/v1/vaults/${vaultId}/secrets/STOLEN`, { apiKey: otherKey, json: { value: 'x', allowed_hosts: ['evil.test'] } })).status,
      404,
    );
    assert.equal((await call(server, 'DELETE', `/v1/vaults/${vaultId}`, { apiKey: otherKey })).status, 404);
    const stolen = await call(server, 'POST', '/v1/sessions/session', { apiKey: otherKey, json: { vault_ids: [vaultId] } });
    assert.equal(stolen.status, 404, "another user's vault cannot be attached");
    const clash = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vault_ids: [vaultId], env: { API_TOKEN: 'mine' } } });
    assert.equal(clash.status, 400, clash.text);
  });

  test('the guest sees only a placeholder, and api.test receives the real value at its injection point (curl, Node, Python)', async () => {
    const created = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1, vault_ids: [vaultId] } });
    assert.equal(created.status, 200, created.text);
    sessionId = created.body.session_id;
    const env = await guest('echo "$API_TOKEN"; env | grep -c -- "' + SECRET + '" || true');
    const [placeholder, count] = env.trim().split('\n');
    assert.match(placeholder!, /^sbxv_[a-z2-7]{26}$/);
    assert.equal(count, '0', 'the value is nowhere in the env');

    // No --cacert: the guest trusts the deployment's CA from its start. api.test echoes what it got: the value,
    // which the guest sees masked (same length: what api.test received was not the placeholder).
    const viaCurl = echoed(await guest('curl -sS -m 20 https://api.test/echo-headers -H "Authorization: Bearer $API_TOKEN"'));
    assert.equal(viaCurl.authorization, `Bearer ${masked(SECRET)}`);
    const viaNode = echoed(
      await guest(
        `node -e "fetch('https://api.test/echo-headers?key=' + process.env.API_TOKEN, { headers: { authorization: 'Bearer ' + process.env.API_TOKEN } }).then((r) => r.text()).then(console.log)"`,
      ),
    );
    assert.equal(viaNode.authorization, `Bearer ${masked(SECRET)}`);
    const viaPython = echoed(
      await guest(
        `python3 -c "import os, urllib.request; r = urllib.request.Request('https://api.test/echo-headers', headers={'Authorization': 'Bearer ' + os.environ['API_TOKEN']}); print(urllib.request.urlopen(r, timeout=20).read().decode())"`,
      ),
    );
    assert.equal(viaPython.authorization, `Bearer ${masked(SECRET)}`);
    // Basic credentials are not this secret's injection point: the placeholder goes as it is (and is flagged).
    const basic = echoed(await guest('curl -sS -m 20 -u "me:$API_TOKEN" https://api.test/echo-headers'));
    assert.equal(basic.authorization, `Basic ${Buffer.from(`me:${placeholder}`).toString('base64')}`);
    const requests = await api.requests();
    assert.ok(
      requests.some((r) => r.path === `/echo-headers?key=${placeholder}`),
      'the query string is never swapped',
    );
    assert.ok(!JSON.stringify(requests).includes(SECRET));
  });

  test('a placeholder sent elsewhere goes out unchanged; over plain HTTP it is flagged', async () => {
    await guest(`cat > /tmp/test-ca.pem <<'PEM'\n${fs.readFileSync(ca.caCertPath, 'utf8')}PEM`);
    const placeholder = (await guest('echo "$API_TOKEN"')).trim();
    const elsewhere = echoed(await guest('curl -sS -m 20 --cacert /tmp/test-ca.pem https://other.test/echo-headers -H "Authorization: Bearer $API_TOKEN"'));
    assert.equal(elsewhere.authorization, `Bearer ${placeholder}`, 'other.test gets the placeholder');
    const plain = echoed(await guest('curl -sS -m 20 http://other.test/echo-headers -H "X-Key: $API_TOKEN"'));
    assert.equal(plain['x-key'], placeholder);
    const plainBound = echoed(await guest('curl -sS -m 20 http://api.test/echo-headers -H "X-Key: $API_TOKEN"'));
    assert.equal(plainBound['x-key'], placeholder, 'never the value over plain HTTP, even to a bound host');
  });

  test("the vault's request log has each use and each flag; flags are events; the egress log shows the interception", async () => {
    const page = await waitUntil('the flags are logged', async () => {
      const res = await call(server, 'GET', `/v1/vaults/${vaultId}/request-logs?limit=100`, { apiKey });
      assert.equal(res.status, 200, res.text);
      return res.body.items.filter((e: any) => e.outcome === 'flagged').length >= 2 && res;
    });
    const items = page.body.items as Array<Record<string, any>>;
    assert.ok(!page.text.includes(SECRET));
    const used = items.filter((e) => e.outcome === 'substituted');
    assert.ok(used.length >= 3, page.text);
    assert.ok(
      used.every(
        (e) =>
          e.host === 'api.test' && e.scheme === 'https' && e.status === 200 && e.vm_id === vmId && e.session_id === sessionId && e.secret_name === 'API_TOKEN',
      ),
    );
    assert.ok(used.some((e) => e.method === 'GET' && e.path === '/echo-headers'));
    const flagged = items.filter((e) => e.outcome === 'flagged');
    assert.ok(
      flagged.some((e) => e.host === 'other.test' && e.scheme === 'http' && /not bound/.test(e.detail)),
      page.text,
    );
    assert.ok(
      flagged.some((e) => e.host === 'api.test' && e.scheme === 'http' && /plain HTTP/.test(e.detail)),
      page.text,
    );
    assert.ok(
      flagged.some((e) => e.host === 'api.test' && e.scheme === 'https' && /not at its injection point \(Authorization: Bearer\): in the query/.test(e.detail)),
      page.text,
    );
    assert.ok(
      flagged.some((e) => e.host === 'api.test' && e.scheme === 'https' && /Basic credentials/.test(e.detail)),
      page.text,
    );
    const onlyFlags = await call(server, 'GET', `/v1/vaults/${vaultId}/request-logs?outcome=flagged&limit=1`, { apiKey });
    assert.equal(onlyFlags.body.items.length, 1);
    assert.ok(onlyFlags.body.next_cursor);
    // Events are rate-limited per session (one a minute, whatever host the guest names); the log has every flag.
    const events = (await listEventsAfter(server.services.database.db, 0, 10_000)).filter(
      (e) => e.type === 'vault.placeholder_flagged' && e.data.session_id === sessionId,
    );
    assert.ok(events.length >= 1 && events.length < flagged.length, JSON.stringify(events));
    const egress = await waitUntil('the intercepted connections are in the egress log', async () => {
      const res = await call(server, 'GET', `/v1/vms/${vmId}/egress/log?destination=api.test&limit=100`, { apiKey });
      return res.body.items.some((e: any) => e.scheme === 'https' && e.verdict === 'allowed' && /intercepted/.test(e.reason) && e.bytes_received > 0) && res;
    });
    assert.equal(egress.status, 200);
    // Usage sums both logs per day.
    const today = (await call(server, 'GET', '/v1/usage?days=1', { apiKey })).body.days[0];
    assert.equal(today.vault_substituted, used.length);
    assert.equal(today.vault_flagged, flagged.length);
    assert.ok(today.egress_attempts > 0 && today.egress_bytes_received > 0, JSON.stringify(today));
  });

  test('a rotated value reaches the running VM at its next request; a deleted secret is no longer swapped', async () => {
    const put = await call(server, 'PUT', `/v1/vaults/${vaultId}/secrets/API_TOKEN`, { apiKey, json: { value: ROTATED, allowed_hosts: ['api.test'] } });
    assert.equal(put.status, 200, put.text);
    assert.ok(!put.text.includes(ROTATED));
    assert.equal(
      echoed(await guest('curl -sS -m 20 https://api.test/echo-headers -H "Authorization: Bearer $API_TOKEN"')).authorization,
      `Bearer ${masked(ROTATED)}`,
    );
    assert.equal((await call(server, 'DELETE', `/v1/vaults/${vaultId}/secrets/API_TOKEN`, { apiKey })).status, 204);
    // No secret is bound to api.test any more: its TLS is no longer intercepted (the guest sees api.test's own certificate).
    const after = echoed(await guest('curl -sS -m 20 --cacert /tmp/test-ca.pem https://api.test/echo-headers -H "Authorization: Bearer $API_TOKEN"'));
    assert.match(after.authorization!, /^Bearer sbxv_/);
  });
});
