/** Custom domain shapes, and the mapping from the core's records. */
import { Type, type Static } from 'typebox';
import { challengeName } from '../../../core/custom-domain-names.ts';
import type { CustomDomainView } from '../../../core/custom-domains.ts';
import { CUSTOM_DOMAIN_FAILURE_REASONS, CUSTOM_DOMAIN_STATUSES, DNS_PROVIDERS } from '../../../model.ts';
import { DOMAIN_NAME_PATTERN } from '../../../contract/host-patterns.ts';
import { StringEnum } from '../../schemas/common.ts';
import { PortNumber } from '../apps/schemas.ts';

const DateTime = Type.String({ format: 'date-time' });
const DateTimeOrNull = Type.Union([DateTime, Type.Null()]);

export const CustomDomainCreateRequest = Type.Object(
  {
    domain: Type.String({
      minLength: 3,
      maxLength: 254,
      pattern: DOMAIN_NAME_PATTERN,
      description:
        "The fully qualified domain name to serve, e.g. app.example.com (stored in lower case; internationalized names in their xn-- form). Not an IP address, not this server's own host name, not SANDBOXD_APP_DOMAIN or a name under it. Point it (CNAME or A/AAAA) at this server or its reverse proxy.",
    }),
    share_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'A share of yours: the domain is served like it (public, or private with its signed link and cookie). Deleting the share deletes the domain',
      }),
    ),
    session_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          "Without share_id: a session of yours whose port the domain serves, to you only (like a private preview, or as a share of that port allows). With share_id: optional, must be the share's",
      }),
    ),
    port: Type.Optional({ ...PortNumber, description: "The port inside the VM, with session_id. With share_id: optional, must be the share's" }),
    app_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'A deployed app of yours, by id (app-…) or name: the domain serves it like its own URL (its live replicas, round robin; a private app to you only). Not with share_id, session_id or port. Deleting the app deletes the domain',
      }),
    ),
    dns_provider: Type.Optional(
      StringEnum(DNS_PROVIDERS, { default: 'manual', description: 'Who creates the TXT record: manual (you, at your DNS host; the only supported value)' }),
    ),
    dns_credentials: Type.Optional(
      Type.Union([Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4096 }), { maxProperties: 32 }), Type.Null()], {
        description:
          'Credentials for a DNS provider that sandboxd would drive itself. None is supported yet, so a non-empty object is refused (422); never stored, logged or shown',
      }),
    ),
  },
  { $id: 'CustomDomainCreateRequest', title: 'CustomDomainCreateRequest', additionalProperties: false },
);
export type CustomDomainCreateBody = Static<typeof CustomDomainCreateRequest>;

export const CustomDomainRecord = Type.Object(
  {
    id: Type.String({ description: 'cd_…' }),
    domain: Type.String({ description: 'Lower case, without a trailing dot' }),
    status: StringEnum(CUSTOM_DOMAIN_STATUSES, {
      description:
        'pending: waiting for the TXT record (checked by POST …/verify and every SANDBOXD_CUSTOM_DOMAIN_CHECK_INTERVAL_SECONDS); verified: requests with this Host are served while the record stays (re-checked every SANDBOXD_CUSTOM_DOMAIN_REVERIFY_SECONDS), until the claim is deleted; failed: final, see failure_reason and last_error',
    }),
    failure_reason: Type.Union([StringEnum(CUSTOM_DOMAIN_FAILURE_REASONS), Type.Null()], {
      description:
        "Why a claim failed: expired (not verified in time), verified_elsewhere (another account verified the domain first) or record_missing (a verified domain's TXT record was not found at SANDBOXD_CUSTOM_DOMAIN_REVERIFY_MISSES re-checks in a row; it is no longer served); null unless failed",
    }),
    share_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The share it is served like; null when it maps session_id and port directly, or an app',
    }),
    session_id: Type.Union([Type.String(), Type.Null()], { description: 'The session whose port it serves; null when it serves an app' }),
    port: Type.Union([Type.Integer(), Type.Null()], { description: 'The port inside the VM; null when it serves an app' }),
    app_id: Type.Union([Type.String(), Type.Null()], { description: 'The deployed app it serves (app-…); null for a share or a port' }),
    dns_provider: StringEnum(DNS_PROVIDERS),
    verification: Type.Object(
      {
        name: Type.String({ description: '_sandboxd-challenge.<domain>' }),
        type: Type.Literal('TXT'),
        value: Type.String({ description: "This claim's token: the record's value, exactly" }),
      },
      { description: 'The DNS record that proves the claim: create it at your DNS host, then POST …/verify' },
    ),
    url: Type.String({
      description: 'Where the domain serves its target once verified: {scheme}://{domain}[:port]/ with the scheme and port of the public URL',
    }),
    link: Type.Union([Type.String(), Type.Null()], {
      description:
        'For a verified domain of a private share: url with a freshly signed share link (?sandboxd_token=…), which sets the preview cookie on first use; else null',
    }),
    link_expires_at: Type.Union([DateTime, Type.Null()], { description: 'When link (and the cookie it sets) stops working' }),
    created_at: DateTime,
    expires_at: Type.Union([DateTime, Type.Null()], { description: 'A pending claim not verified by then fails (expired); null once verified or failed' }),
    verified_at: DateTimeOrNull,
    last_checked_at: Type.Union([DateTime, Type.Null()], { description: 'When DNS was last asked for the record' }),
    last_error: Type.Union([Type.String(), Type.Null()], {
      description: 'What the last check or re-check found wrong (or why the claim failed); null after a successful one',
    }),
    next_check_at: Type.Union([DateTime, Type.Null()], {
      description: "When the background checker looks next: a pending claim's next check, a verified one's next re-check of its record; null once failed",
    }),
  },
  { $id: 'CustomDomain', title: 'CustomDomain' },
);

export const CustomDomainList = Type.Object({ custom_domains: Type.Array(Type.Ref('CustomDomain')) }, { $id: 'CustomDomainList', title: 'CustomDomainList' });

export const CustomDomainTlsCheck = Type.Object(
  { domain: Type.String(), verified: Type.Literal(true) },
  { $id: 'CustomDomainTlsCheck', title: 'CustomDomainTlsCheck' },
);

export const DomainIdParams = Type.Object({ domain_id: Type.String({ maxLength: 64 }) });

export const CUSTOM_DOMAIN_SCHEMAS = [CustomDomainCreateRequest, CustomDomainRecord, CustomDomainList, CustomDomainTlsCheck];

export function toCustomDomainRecord({ domain: claim, url, link, linkExpiresAt }: CustomDomainView): Static<typeof CustomDomainRecord> {
  return {
    id: claim.id,
    domain: claim.domain,
    status: claim.status,
    failure_reason: claim.failureReason,
    share_id: claim.shareId,
    session_id: claim.sessionId,
    port: claim.port,
    app_id: claim.appId,
    dns_provider: claim.dnsProvider,
    verification: { name: challengeName(claim.domain), type: 'TXT', value: claim.verificationToken },
    url,
    link,
    link_expires_at: linkExpiresAt,
    created_at: claim.createdAt,
    expires_at: claim.status === 'pending' ? claim.expiresAt : null,
    verified_at: claim.verifiedAt,
    last_checked_at: claim.lastCheckedAt,
    last_error: claim.lastError,
    next_check_at: claim.nextCheckAt,
  };
}
