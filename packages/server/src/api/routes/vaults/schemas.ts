/** Vault records (never a secret's value), their request bodies, and the request log, as the API shows them. */
import { Type, type Static } from 'typebox';
import {
  MAX_HOSTS_PER_SECRET,
  MAX_SECRET_VALUE_BYTES,
  MAX_SECRETS_PER_VAULT,
  type VaultSecretView,
  type VaultView,
} from '../../../core/vault/vault-service.ts';
import { StringEnum } from '../../schemas/common.ts';
import type { VaultRequestRecord } from '../../../activity.ts';

const NullableString = Type.Union([Type.String(), Type.Null()]);

const INJECTION_DESCRIPTION =
  'Where in a request the placeholder is swapped for the value, and nowhere else (not the path, the query or another header, which a server may echo back). ' +
  '`{"type":"bearer"}` (the default): `Authorization: Bearer <placeholder>`. `{"type":"basic"}`: `Authorization: Basic base64(user:password)` with the placeholder as the user or the password. ' +
  '`{"type":"header","name":"X-Api-Key","prefix":""}`: that header, sent once, whose value is exactly prefix + placeholder (GitHub\'s `Authorization: token …` is name `Authorization`, prefix `token `). ' +
  'Prefixes and schemes compare case-insensitively. A placeholder found anywhere else goes out unchanged and is flagged in the request log';

export const VaultSecretInjection = Type.Object(
  {
    type: StringEnum(['bearer', 'basic', 'header'] as const),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$", description: 'The header (type `header` only)' })),
    prefix: Type.Optional(
      Type.String({ maxLength: 64, description: 'What comes before the placeholder in the header value (type `header` only; default "")' }),
    ),
  },
  { $id: 'VaultSecretInjection', title: 'VaultSecretInjection', additionalProperties: false, description: INJECTION_DESCRIPTION },
);
const SecretName = Type.String({
  pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$',
  description: 'The environment variable VMs see its placeholder in, e.g. OPENAI_API_KEY',
});
const AllowedHosts = Type.Array(Type.String({ minLength: 1, maxLength: 255 }), {
  minItems: 1,
  maxItems: MAX_HOSTS_PER_SECRET,
  description: 'Hosts the value may be sent to over HTTPS: `api.example.com` or `*.example.com` (its subdomains)',
});

export const VaultSecretRecord = Type.Object(
  {
    name: Type.String(),
    allowed_hosts: Type.Array(Type.String()),
    inject: Type.Ref('VaultSecretInjection'),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time', description: 'Last change of the value, the hosts or the injection point' }),
  },
  { $id: 'VaultSecret', title: 'VaultSecret', description: 'A secret of a vault: its name and hosts, never its value' },
);

export const VaultRecord = Type.Object(
  {
    id: Type.String({ description: '`vlt_…`' }),
    user_id: Type.Integer(),
    name: Type.String(),
    description: NullableString,
    secrets: Type.Array(Type.Ref('VaultSecret')),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Vault', title: 'Vault' },
);

export const VaultSecretInput = Type.Object(
  {
    name: SecretName,
    value: Type.String({ minLength: 1, maxLength: MAX_SECRET_VALUE_BYTES, description: 'The secret; stored encrypted and never returned' }),
    allowed_hosts: AllowedHosts,
    inject: Type.Optional(Type.Ref('VaultSecretInjection') as unknown as typeof VaultSecretInjection),
  },
  { $id: 'VaultSecretInput', title: 'VaultSecretInput', additionalProperties: false },
);

export const VaultCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 128, description: 'Unique among your vaults' }),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
    secrets: Type.Optional(Type.Array(Type.Ref('VaultSecretInput') as unknown as typeof VaultSecretInput, { maxItems: MAX_SECRETS_PER_VAULT })),
  },
  { $id: 'VaultCreate', title: 'VaultCreate', additionalProperties: false },
);

export const VaultUpdateBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 1000 }), Type.Null()])),
  },
  { $id: 'VaultUpdate', title: 'VaultUpdate', additionalProperties: false },
);

export const VaultSecretSetBody = Type.Object(
  {
    value: Type.String({ minLength: 1, maxLength: MAX_SECRET_VALUE_BYTES, description: 'The new value; stored encrypted and never returned' }),
    allowed_hosts: AllowedHosts,
    inject: Type.Optional(
      Type.Ref('VaultSecretInjection', {
        description: 'Absent: the secret keeps its injection point (a new secret gets `{"type":"bearer"}`)',
      }) as unknown as typeof VaultSecretInjection,
    ),
  },
  { $id: 'VaultSecretSet', title: 'VaultSecretSet', additionalProperties: false },
);

export const VaultRequestLogRecord = Type.Object(
  {
    id: Type.Integer(),
    at: Type.String({ format: 'date-time' }),
    vault_id: Type.String(),
    secret_name: Type.String(),
    session_id: Type.String(),
    vm_id: Type.String(),
    outcome: StringEnum(['substituted', 'flagged'] as const, {
      description:
        '`substituted`: the value replaced the placeholder in a request to a bound host; `flagged`: the placeholder went out unchanged somewhere the secret is not bound to',
    }),
    scheme: StringEnum(['http', 'https'] as const),
    host: Type.String({ description: 'The name the VM sent the request to (SNI or Host), or its address' }),
    method: NullableString,
    path: Type.Union([Type.String(), Type.Null()], { description: 'The request path as the VM sent it, without its query' }),
    status: Type.Union([Type.Integer(), Type.Null()], { description: "The upstream's HTTP status (null: no answer, or a plain HTTP connection)" }),
    detail: NullableString,
  },
  { $id: 'VaultRequestLogEntry', title: 'VaultRequestLogEntry' },
);

export const VaultRequestLogList = Type.Object(
  {
    items: Type.Array(Type.Ref('VaultRequestLogEntry')),
    next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `cursor` for older entries; null on the last page' }),
  },
  { $id: 'VaultRequestLogList', title: 'VaultRequestLogList' },
);

export const VAULT_SCHEMAS = [
  VaultSecretInjection,
  VaultSecretRecord,
  VaultRecord,
  VaultSecretInput,
  VaultCreateBody,
  VaultUpdateBody,
  VaultSecretSetBody,
  VaultRequestLogRecord,
  VaultRequestLogList,
];

export const VaultIdParams = Type.Object({ vault_id: Type.String({ minLength: 1, maxLength: 64 }) });
export const VaultSecretParams = Type.Object({ vault_id: Type.String({ minLength: 1, maxLength: 64 }), name: SecretName });

/** `vault_ids` of a session or VM create request. */
export const VaultIds = Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
  maxItems: 20,
  description:
    "Your vaults whose secrets the VMs may use without holding them: each secret becomes an environment variable holding a placeholder, swapped for the value only at the secret's injection point of HTTPS requests to its allowed_hosts (see POST /v1/vaults)",
});

export function toVaultSecretRecord(secret: VaultSecretView): Static<typeof VaultSecretRecord> {
  return { name: secret.name, allowed_hosts: secret.allowedHosts, inject: secret.inject, created_at: secret.createdAt, updated_at: secret.updatedAt };
}

export function toVaultRecord(vault: VaultView): Static<typeof VaultRecord> {
  return {
    id: vault.id,
    user_id: vault.userId,
    name: vault.name,
    description: vault.description,
    secrets: vault.secrets.map(toVaultSecretRecord),
    created_at: vault.createdAt,
    updated_at: vault.updatedAt,
  };
}

export function toVaultRequestLogRecord(entry: VaultRequestRecord): Static<typeof VaultRequestLogRecord> {
  return {
    id: entry.id,
    at: entry.at,
    vault_id: entry.vaultId,
    secret_name: entry.secretName,
    session_id: entry.sessionId,
    vm_id: entry.vmId,
    outcome: entry.outcome,
    scheme: entry.scheme,
    host: entry.host,
    method: entry.method,
    path: entry.path,
    status: entry.status,
    detail: entry.detail,
  };
}
