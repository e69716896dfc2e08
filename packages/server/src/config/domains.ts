/** Settings of where VM ports are served: the app domain, share links, and custom domains with their DNS checks. */
import { dnsServers, integer, type Setting, type SettingValues } from './kit.ts';

/** The settings of the domains block, by name (each name is unique across the blocks). */
export const domainsSettings = {
  appDomain: {
    env: 'SANDBOXD_APP_DOMAIN',
    description:
      'Domain whose subdomains {vm_id}-{port}.<domain> serve VM ports at / (the direct_url; needs wildcard DNS to this server, and a wildcard certificate for https); default localhost, which browsers resolve to this machine',
    parse: (raw: string) => {
      const domain = raw.trim().toLowerCase().replace(/\.$/, '');
      if (!/^(?=.{1,200}$)[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/.test(domain)) throw new Error(`"${raw}" is not a domain name`);
      return domain;
    },
    fallback: () => 'localhost',
  },
  shareLinkTtlSeconds: {
    env: 'SANDBOXD_SHARE_LINK_TTL_SECONDS',
    description: 'Lifetime of a private share link (and the preview cookie it sets) when the share itself expires later or never',
    parse: integer(60, 30 * 86400),
    fallback: () => 86_400,
  },
  dnsServers: {
    env: 'SANDBOXD_DNS_SERVERS',
    description:
      'DNS servers that custom domain verification asks for TXT records, comma-separated IP addresses with an optional port (1.1.1.1, 127.0.0.1:5353, [2001:db8::53]:53); default: the system resolvers (/etc/resolv.conf)',
    parse: dnsServers,
    fallback: () => null as string[] | null,
  },
  dnsTimeoutMs: {
    env: 'SANDBOXD_DNS_TIMEOUT_MS',
    description: 'Longest one TXT lookup of a custom domain verification may take, all tries included, in milliseconds',
    parse: integer(100, 60_000),
    fallback: () => 5000,
  },
  customDomainCheckIntervalSeconds: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_CHECK_INTERVAL_SECONDS',
    description:
      'Seconds between two background checks of the TXT record of a pending custom domain (POST /v1/custom-domains/{domain_id}/verify checks at once)',
    parse: integer(1, 86_400),
    fallback: () => 60,
  },
  customDomainPendingSeconds: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_PENDING_SECONDS',
    description: 'How long a custom domain claim may stay pending: one not verified by then fails as expired and must be made anew (default 7 days)',
    parse: integer(60, 90 * 86_400),
    fallback: () => 7 * 86_400,
  },
  customDomainReverifySeconds: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_REVERIFY_SECONDS',
    description: "Seconds between two re-checks of a verified custom domain's TXT record (default 6 hours); see SANDBOXD_CUSTOM_DOMAIN_REVERIFY_MISSES",
    parse: integer(1, 30 * 86_400),
    fallback: () => 6 * 3600,
  },
  customDomainReverifyMisses: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_REVERIFY_MISSES',
    description:
      "Re-checks in a row that do not find a verified custom domain's TXT record (or cannot look it up) after which the claim fails (record_missing) and the domain stops being served (default 3)",
    parse: integer(1, 1000),
    fallback: () => 3,
  },
  customDomainRefreshSeconds: {
    env: 'SANDBOXD_CUSTOM_DOMAIN_REFRESH_SECONDS',
    description:
      'How often each node reloads the set of verified custom domains from the store, so that a domain verified on another node of a cluster is served here too (a deletion acts at once everywhere)',
    parse: integer(1, 3600),
    fallback: () => 5,
  },
} satisfies Record<string, Setting<unknown>>;

/** The domains block of the configuration. */
export type DomainsConfig = SettingValues<typeof domainsSettings>;
