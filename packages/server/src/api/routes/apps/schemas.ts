/** Schemas of app URLs and shares. */
import { Type, type Static } from 'typebox';
import { StringEnum } from '../../schemas/common.ts';

export const PortNumber = Type.Integer({ minimum: 1, maximum: 65535, description: 'TCP port inside the VM, 1 to 65535' });

export const AppUrlResponse = Type.Object(
  {
    url: Type.String({ description: 'The port through the API: {public URL}/v1/app/{session_id}/{port}/' }),
    direct_url: Type.String({
      description: 'The port at / of its own host name: {vm_id}-{port}.{SANDBOXD_APP_DOMAIN} (needs wildcard DNS, and wildcard TLS for https)',
    }),
    vm_ip: Type.String({ description: "The guest's address on its private network, for debugging (nothing routes to it from outside)" }),
    port: Type.Integer(),
    vm_id: Type.String(),
    session_id: Type.String(),
    status: StringEnum(['active', 'killed'], { description: 'VM status (killed also after expiry)' }),
    expires_in_seconds: Type.Number({ description: 'Seconds until the VM is killed; 0 when it is no longer running' }),
  },
  { $id: 'AppUrlResponse', title: 'AppUrlResponse' },
);

export const ShareCreateRequest = Type.Object(
  {
    session_id: Type.String({ description: 'A session of yours' }),
    port: PortNumber,
    is_public: Type.Boolean({ description: 'true: anyone may open it; false: only holders of the signed link it hands out (and you)' }),
    expires_in_seconds: Type.Optional(
      Type.Union([Type.Integer({ minimum: 60, maximum: 2_592_000 }), Type.Null()], {
        description: 'Revoke it by itself after this many seconds (60 to 2592000); null or absent: until deleted',
      }),
    ),
  },
  { $id: 'ShareCreateRequest', title: 'ShareCreateRequest', additionalProperties: false },
);
export type ShareCreateBody = Static<typeof ShareCreateRequest>;

export const Share = Type.Object(
  {
    share_id: Type.String(),
    session_id: Type.String(),
    port: Type.Integer(),
    is_public: Type.Boolean(),
    url: Type.String({ description: 'Address to hand out. For a private share a signed link (…?sandboxd_token=…), freshly signed on every read' }),
    direct_url: Type.Union([Type.String(), Type.Null()], { description: 'The same by host name; null while the session has no VM' }),
    link_expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When the link in url (and the cookie it sets) stops working; null for public shares',
    }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When the share ends by itself; null: until deleted' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'Share', title: 'Share' },
);

export const ShareList = Type.Object({ shares: Type.Array(Type.Ref('Share')) }, { $id: 'ShareList', title: 'ShareList' });

export const ShareIdParams = Type.Object({ share_id: Type.String() });

export const APP_SCHEMAS = [AppUrlResponse, ShareCreateRequest, Share, ShareList];
