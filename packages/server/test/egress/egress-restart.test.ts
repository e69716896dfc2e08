/**
 * Egress policies across a server restart that keeps its VMs (SANDBOXD_KEEP_VMS_ON_SHUTDOWN), with real server
 * processes: while no server runs, the restricted VM's rules stay (its DNS and web connections fail closed
 * instead of opening up); the next server re-adopts the VM and re-applies its policy; killing the VM removes
 * its rules, and a server that stops without keeping VMs leaves no table behind.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EGRESS_TABLE_PREFIX } from '../../src/net/egress/ruleset.ts';
import { startDnsServer, type DnsServer } from '../helpers/dns-server.ts';
import { startNetnsWebServer, type NetnsWebServer } from '../helpers/netns-web.ts';
import { adminApi, startServerProcess, type RunningServer } from '../helpers/processes.ts';
import { waitUntil } from '../helpers/wait.ts';

const skip = process.getuid?.() !== 0 ? 'needs root (nftables, cgroups, network namespaces)' : false;

/** The egress tables on this host whose text mentions `needle`. */
function tablesWith(needle: string): string[] {
  const listed = spawnSync('nft', ['list', 'tables', 'inet'], { encoding: 'utf8' }).stdout;
  return [...listed.matchAll(new RegExp(`table inet (${EGRESS_TABLE_PREFIX}_\\w+)`, 'g'))]
    .map((m) => m[1]!)
    .filter((name) => spawnSync('nft', ['list', 'table', 'inet', name], { encoding: 'utf8' }).stdout.includes(needle));
}

describe('egress policies across a server restart', { skip, timeout: 600_000 }, () => {
  let dns: DnsServer;
  let a: NetnsWebServer;
  let b: NetnsWebServer;
  let server: RunningServer | undefined;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-egress-restart-'));

  const start = (keepVms: boolean) =>
    startServerProcess(
      {
        SANDBOXD_DATA_DIR: dataDir,
        SANDBOXD_POOL_SIZE: '0',
        SANDBOXD_WARM_VCPUS: '1',
        SANDBOXD_KEEP_VMS_ON_SHUTDOWN: String(keepVms),
        SANDBOXD_EGRESS_DNS_SERVERS: dns.address,
        SANDBOXD_DNS_SERVERS: '127.0.0.1:1',
      },
      120_000,
    );
  const api = adminApi.bind(null, dataDir, () => server!.baseUrl);
  const probe = 'for u in http://a.test/hello http://b.test/hello; do curl -s -m 8 -o /dev/null -w \'%{http_code} \' $u; echo -n "$? "; done';

  before(async () => {
    dns = await startDnsServer();
    a = await startNetnsWebServer({ '/hello': 'hello from a' });
    b = await startNetnsWebServer({ '/hello': 'hello from b' });
    dns.setA('a.test', [a.serverAddress]);
    dns.setA('b.test', [b.serverAddress]);
  });

  after(async () => {
    await server?.stop();
    await Promise.all([a?.stop(), b?.stop(), dns?.close()]);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  test("the policy holds before, during and after the restart; the VM's end removes its rules", async () => {
    server = await start(true);
    const call = api();
    const session = await call('POST', '/v1/sessions/session', { vcpu_count: 1, vm_lifetime_seconds: 900, egress_policy: { allowed_domains: ['a.test'] } });
    assert.equal(session.status, 200, JSON.stringify(session.body));
    const run = async () => {
      const res = await api()('POST', '/execute', { session_id: session.body.session_id, language: 'bash', command: probe, timeout: 60 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return { vmId: res.body.vm_id as string, out: String(res.body.stdout).trim() };
    };
    const first = await run();
    assert.equal(first.out, '200 0 000 6', 'a.test reachable, b.test does not resolve');
    const chain = `f_${first.vmId.replace(/[^A-Za-z0-9]/g, '_')}`;

    await server.stop();
    server = undefined;
    assert.equal(tablesWith(chain).length, 1, 'the rules stay while no server runs');

    server = await start(false);
    await waitUntil(
      'the policy is enforced again',
      async () => {
        const res = await api()('GET', `/v1/vms/${first.vmId}/egress`);
        return res.status === 200 && res.body.enforced === true;
      },
      180_000,
      500,
    );
    const second = await run();
    assert.deepEqual(second, { vmId: first.vmId, out: '200 0 000 6' }, 'the same VM, under the same policy');

    const [table] = tablesWith(chain);
    assert.ok(table);
    const killed = await api()('DELETE', `/v1/vms/${first.vmId}`);
    assert.equal(killed.status, 200, JSON.stringify(killed.body));
    await waitUntil("the VM's rules are gone", async () => tablesWith(chain).length === 0, 10_000, 200);
    await server.stop();
    server = undefined;
    assert.notEqual(spawnSync('nft', ['list', 'table', 'inet', table]).status, 0, 'a server that does not keep its VMs leaves no table');
  });
});
