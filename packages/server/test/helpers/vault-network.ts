/**
 * The outside world of the vault tests: HTTPS upstreams in network namespaces of their own (`netns-web.ts`), one
 * certificate for all their names from a throwaway CA (`test-ca.ts`) that the server trusts through
 * SANDBOXD_VAULT_UPSTREAM_CA_FILE, and a DNS server (`dns-server.ts`) that resolves each name to its upstream,
 * used by the server's egress enforcement. Several names may share one upstream (a front end routing on Host).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ConfigOverrides } from '../../src/config/index.ts';
import { startDnsServer, type DnsServer } from './dns-server.ts';
import { startNetnsWebServer, type NetnsPage, type NetnsWebServer } from './netns-web.ts';
import { createTestCa, type TestCa } from './test-ca.ts';

/** The upstream that echoes everything (fixtures/echo-upstream.mjs). */
export const ECHO_UPSTREAM = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'echo-upstream.mjs');

export interface VaultUpstreamSpec {
  /** The names that resolve to this upstream. */
  names: string[];
  /** A fixture server other than browser-pages.mjs (e.g. ECHO_UPSTREAM). */
  script?: string;
  pages?: Record<string, NetnsPage>;
}

export interface VaultNetwork {
  dns: DnsServer;
  ca: TestCa;
  /** One per spec, in order. */
  upstreams: NetnsWebServer[];
  /** What the test server needs: the DNS server for egress, and the upstreams' CA. */
  config: ConfigOverrides;
  stop(): Promise<void>;
}

export async function startVaultNetwork(specs: VaultUpstreamSpec[]): Promise<VaultNetwork> {
  const dns = await startDnsServer();
  const ca = await createTestCa(specs.flatMap((spec) => spec.names));
  const upstreams: NetnsWebServer[] = [];
  const stop = async () => {
    await Promise.all([...upstreams.map((upstream) => upstream.stop()), dns.close()]);
    ca.remove();
  };
  try {
    for (const spec of specs) {
      const upstream = await startNetnsWebServer(spec.pages ?? {}, {
        tls: { certPath: ca.certPath, keyPath: ca.keyPath },
        ...(spec.script ? { script: spec.script } : {}),
      });
      upstreams.push(upstream);
      for (const name of spec.names) dns.setA(name, [upstream.serverAddress]);
    }
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  return { dns, ca, upstreams, config: { egressDnsServers: [dns.address], vaultUpstreamCaFile: ca.caCertPath }, stop };
}
