/** The spec's API key record and create/update body, and the mapping from the core's key. */
import { Type, type Static } from 'typebox';
import type { ApiKey, CreatedApiKey } from '../../../core/api-keys.ts';
import { API_KEY_FORMATS } from '../../../core/auth/api-key-secrets.ts';
import { RecordId, StringEnum } from '../../schemas/common.ts';

const DateTimeOrNull = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const ApiKeyRecord = Type.Object(
  {
    id: Type.Integer(),
    key_prefix: Type.String({ description: 'The first characters of the key, to recognise it' }),
    user_id: Type.Integer(),
    status: Type.Union([StringEnum(['active', 'expired']), Type.Null()]),
    created_at: DateTimeOrNull,
    expires_at: DateTimeOrNull,
    description: Type.Union([Type.String(), Type.Null()]),
    last_used_at: Type.Optional(DateTimeOrNull),
    full_key: Type.Optional(
      Type.Union([Type.String(), Type.Null()], { description: 'The complete key: only in the response of POST /v1/api-keys/, never again' }),
    ),
  },
  { $id: 'ApiKeyRecord', title: 'ApiKeyRecord' },
);

export const ApiKeyBody = Type.Object(
  {
    expires_at: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the key stops working; null = never' })),
    description: Type.Optional(Type.Union([Type.String({ maxLength: 500 }), Type.Null()])),
  },
  { $id: 'ApiKeyBody', title: 'ApiKeyCreateUpdate' },
);

/** What a new key may say besides its changes: the format it is made in. */
export const ApiKeyCreateBody = Type.Object(
  {
    ...ApiKeyBody.properties,
    format: Type.Optional(
      StringEnum(API_KEY_FORMATS, {
        description:
          "`sandboxd` (default): `sbx_sk_` + 43 base64url characters. `e2b`: `e2b_` + 40 hex digits, the shape E2B's tools expect (docs/e2b.md); either format works with both the native and the E2B-compatible API",
      }),
    ),
  },
  { $id: 'ApiKeyCreateBody', title: 'ApiKeyCreate' },
);

export const ItemIdParams = Type.Object({ item_id: RecordId() });

export type ApiKeyRecordValue = Static<typeof ApiKeyRecord>;

export function toApiKeyRecord(key: ApiKey | CreatedApiKey): ApiKeyRecordValue {
  return {
    id: key.id,
    key_prefix: key.keyPrefix,
    user_id: key.userId,
    status: key.status,
    created_at: key.createdAt,
    expires_at: key.expiresAt,
    description: key.description,
    last_used_at: key.lastUsedAt,
    ...('fullKey' in key ? { full_key: key.fullKey } : {}),
  };
}
