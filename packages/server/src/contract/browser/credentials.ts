/**
 * Stored browser credentials on the wire: a login `fill-credential` types into pages of its allowed hosts only.
 * Hosts follow the one host-pattern grammar (`contract/host-patterns.ts`): exact names or addresses, or `*.`
 * and a name; never `*` alone, never a port.
 */
import { Type, type Static } from 'typebox';
import { HOST_PATTERN_PATTERN } from '../host-patterns.ts';
import { DateTime, DateTimeOrNull } from '../kit.ts';

/** The most hosts one credential is allowed on. */
export const MAX_CREDENTIAL_HOSTS = 50;

const HostPattern = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: HOST_PATTERN_PATTERN,
  description: 'A host name, exact (`example.com` does not cover `www.example.com`) or `*.example.com` for its subdomains',
});
const AllowedHosts = Type.Array(HostPattern, {
  minItems: 1,
  maxItems: MAX_CREDENTIAL_HOSTS,
  description: `The hosts it may be filled on (1 to ${MAX_CREDENTIAL_HOSTS}): the page must be on one of them`,
});
const CredentialUsername = Type.String({ minLength: 1, maxLength: 1024 });
const CredentialPassword = Type.String({ minLength: 1, maxLength: 4096, description: 'Never shown again: no answer or list has it' });

export const BrowserCredentialRecord = Type.Object(
  {
    credential_id: Type.String(),
    name: Type.String(),
    username: Type.String(),
    allowed_hosts: Type.Array(Type.String()),
    created_at: DateTime,
    updated_at: DateTime,
    last_used_at: DateTimeOrNull,
  },
  { $id: 'BrowserCredentialRecord', title: 'BrowserCredentialRecord', description: 'A stored login: never its password' },
);
export type BrowserCredentialRecord = Static<typeof BrowserCredentialRecord>;

export const BrowserCredentialList = Type.Object(
  { credentials: Type.Array(Type.Ref('BrowserCredentialRecord') as unknown as typeof BrowserCredentialRecord) },
  { $id: 'BrowserCredentialList', title: 'BrowserCredentialList' },
);
export type BrowserCredentialList = Static<typeof BrowserCredentialList>;

export const BrowserCredentialCreateRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'Unique among your credentials' }),
    username: CredentialUsername,
    password: CredentialPassword,
    allowed_hosts: AllowedHosts,
  },
  { $id: 'BrowserCredentialCreateRequest', title: 'BrowserCredentialCreateRequest' },
);
export type BrowserCredentialCreateRequest = Static<typeof BrowserCredentialCreateRequest>;

export const BrowserCredentialUpdateRequest = Type.Object(
  {
    username: Type.Optional(CredentialUsername),
    password: Type.Optional(CredentialPassword),
    allowed_hosts: Type.Optional(AllowedHosts),
  },
  { $id: 'BrowserCredentialUpdateRequest', title: 'BrowserCredentialUpdateRequest', description: 'Absent fields are kept' },
);
export type BrowserCredentialUpdateRequest = Static<typeof BrowserCredentialUpdateRequest>;

export const BrowserCredentialIdParams = Type.Object({ credential_id: Type.String({ minLength: 1, maxLength: 64 }) });
