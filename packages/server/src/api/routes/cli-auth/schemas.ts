/** Schemas of the command-line login (named as the spec names them: CLIAuth…). */
import { Type, type Static } from 'typebox';

/** RFC 7636: 43 to 128 characters of the unreserved set. */
const CODE_VERIFIER_PATTERN = '^[A-Za-z0-9._~-]{43,128}$';

export const CliAuthStartRequest = Type.Object(
  {
    hostname: Type.String({
      minLength: 1,
      maxLength: 253,
      pattern: '^[^\\u0000-\\u001f\\u007f]+$',
      description: 'Name of the machine logging in; the key is described "CLI - <hostname>"',
    }),
    code_challenge: Type.String({
      minLength: 43,
      maxLength: 43,
      pattern: '^[A-Za-z0-9_-]{43}$',
      description: 'base64url(SHA-256(code_verifier)), no padding (PKCE S256)',
    }),
    code_challenge_method: Type.Optional(Type.Unsafe<'S256'>({ type: 'string', enum: ['S256'], description: 'Only S256' })),
  },
  { $id: 'CLIAuthStartRequest', title: 'CLIAuthStartRequest' },
);

export const CliAuthStartResponse = Type.Object(
  {
    device_code: Type.String({ description: 'Secret of the command line: send it to /api/cli-auth/exchange with the code_verifier' }),
    user_code: Type.String({ description: 'Short code the user confirms in the browser, e.g. BCDF-GHJK' }),
    verification_uri: Type.String({ description: 'Page where the user signs in and approves' }),
    verification_uri_complete: Type.String({ description: 'The same page with the user code filled in' }),
    expires_in: Type.Integer({ description: 'Seconds until the device code expires' }),
    interval: Type.Integer({ description: 'Seconds to wait between two polls of the exchange' }),
  },
  { $id: 'CLIAuthStartResponse', title: 'CLIAuthStartResponse' },
);

export const CliAuthApproveRequest = Type.Object(
  {
    user_code: Type.String({ minLength: 1, maxLength: 20, description: 'The code the command line shows (any case; the dash is optional)' }),
    deny: Type.Optional(Type.Boolean({ description: 'true denies the login instead of approving it' })),
  },
  { $id: 'CLIAuthApproveRequest', title: 'CLIAuthApproveRequest' },
);

export const CliAuthApproveResponse = Type.Object(
  {
    status: Type.String({ description: '"approved" or "denied"' }),
    user_code: Type.String(),
    hostname: Type.String(),
    expires_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'CLIAuthApproveResponse', title: 'CLIAuthApproveResponse' },
);

export const CliAuthExchangeRequest = Type.Object(
  {
    device_code: Type.String({ minLength: 1, maxLength: 200 }),
    code_verifier: Type.String({ pattern: CODE_VERIFIER_PATTERN, description: 'The PKCE verifier whose S256 challenge started the login' }),
    grant_type: Type.Optional(Type.String({ description: 'Ignored; accepted for RFC 8628 clients' })),
  },
  { $id: 'CLIAuthExchangeRequest', title: 'CLIAuthExchangeRequest' },
);

export const CliAuthExchangeResponse = Type.Object(
  {
    api_key: Type.String({ description: 'The new API key: shown here once, never again' }),
    api_key_id: Type.Integer(),
    key_prefix: Type.String(),
    user_id: Type.Integer(),
    username: Type.String(),
    description: Type.String({ description: '"CLI - <hostname>"' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  { $id: 'CLIAuthExchangeResponse', title: 'CLIAuthExchangeResponse' },
);

export type CliAuthStartBody = Static<typeof CliAuthStartRequest>;
export type CliAuthApproveBody = Static<typeof CliAuthApproveRequest>;
export type CliAuthExchangeBody = Static<typeof CliAuthExchangeRequest>;

export const CLI_AUTH_SCHEMAS = [
  CliAuthStartRequest,
  CliAuthStartResponse,
  CliAuthApproveRequest,
  CliAuthApproveResponse,
  CliAuthExchangeRequest,
  CliAuthExchangeResponse,
];
