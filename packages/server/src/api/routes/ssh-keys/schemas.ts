/** The SSH key record, its create body, and the SSH gateway's address as the API shows them. */
import { Type, type Static } from 'typebox';
import type { SshKey } from '../../../core/ssh-keys.ts';
import { RecordId } from '../../schemas/common.ts';

export const SshKeyRecord = Type.Object(
  {
    id: Type.Integer(),
    user_id: Type.Integer(),
    name: Type.String({ description: "Your label for the key (default: the key's comment)" }),
    key_type: Type.String({ description: 'e.g. ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa' }),
    public_key: Type.String({ description: 'The key as one authorized_keys line, without the comment' }),
    fingerprint: Type.String({ description: '`SHA256:…`, as `ssh-keygen -l -E sha256 -f key.pub` prints it' }),
    created_at: Type.String({ format: 'date-time' }),
    last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'Last login through the SSH gateway (minute precision)' }),
  },
  { $id: 'SshKeyRecord', title: 'SshKeyRecord' },
);

export const SshKeyCreateBody = Type.Object(
  {
    public_key: Type.String({ minLength: 1, maxLength: 16_384, description: 'One line of a .pub file: ed25519, ECDSA or RSA (at least 2048 bits)' }),
    name: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: "A label; default the key's comment" })),
  },
  { $id: 'SshKeyCreateBody', title: 'SshKeyCreate', additionalProperties: false },
);

export const SshGatewayInfo = Type.Object(
  {
    enabled: Type.Boolean({ description: 'False when the server runs without its SSH gateway (SANDBOXD_SSH_LISTEN=off)' }),
    host: Type.Union([Type.String(), Type.Null()], { description: 'The host name to connect to' }),
    port: Type.Union([Type.Integer(), Type.Null()]),
    host_key_fingerprint: Type.Union([Type.String(), Type.Null()], {
      description: "The gateway's host key, `SHA256:…`: compare it with what ssh shows at the first connection",
    }),
    usage: Type.String({ description: 'How to log in' }),
  },
  { $id: 'SshGatewayInfo', title: 'SshGatewayInfo' },
);

export const SSH_KEY_SCHEMAS = [SshKeyRecord, SshKeyCreateBody, SshGatewayInfo];

export const SshKeyIdParams = Type.Object({ key_id: RecordId() });

export type SshKeyRecordValue = Static<typeof SshKeyRecord>;

export function toSshKeyRecord(key: SshKey): SshKeyRecordValue {
  return {
    id: key.id,
    user_id: key.userId,
    name: key.name,
    key_type: key.keyType,
    public_key: key.publicKey,
    fingerprint: key.fingerprint,
    created_at: key.createdAt,
    last_used_at: key.lastUsedAt,
  };
}
