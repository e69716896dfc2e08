/**
 * The caller a node authenticated, as it travels in the body of a signed internal request: the receiving node
 * trusts it as it trusts the sender (internal-auth.ts), and acts for that user exactly as the sender would have.
 */
import { Type } from 'typebox';

export const SignedPrincipal = Type.Object({
  userId: Type.Integer(),
  username: Type.String(),
  plan: Type.String(),
  isAdmin: Type.Boolean(),
  via: Type.Union([Type.Literal('api_key'), Type.Literal('access_token'), Type.Literal('ssh_key')]),
  apiKeyId: Type.Union([Type.Integer(), Type.Null()]),
});
