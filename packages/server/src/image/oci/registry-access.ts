import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OciImageError } from './errors.ts';
import type { ImageReference } from './reference.ts';
import type { RegistryCredentials } from './types.ts';

/** How skopeo is to reach one registry: its transport security and its credentials. */
export interface RegistryAccess {
  /** `--tls-verify` flag for `skopeo inspect` (and `--src-tls-verify` for `skopeo copy`). */
  tlsVerify: boolean;
  /** An auth file holding the credentials (0600, in a 0700 directory), or null for anonymous access. */
  authFile: string | null;
}

/** skopeo inspect's options for `access`. */
export function inspectOptions(access: RegistryAccess): string[] {
  return [`--tls-verify=${access.tlsVerify}`, ...(access.authFile ? ['--authfile', access.authFile] : ['--no-creds'])];
}

/** skopeo copy's source options for `access`. */
export function copySourceOptions(access: RegistryAccess): string[] {
  return [`--src-tls-verify=${access.tlsVerify}`, ...(access.authFile ? ['--src-authfile', access.authFile] : ['--src-no-creds'])];
}

/**
 * Runs `use` with the access to `reference`'s registry, then removes the auth file whatever happened.
 *
 * Credentials go into a containers-auth.json file (`{"auths":{"<registry>":{"auth":base64(user:password)}}}`)
 * that only root can read, never onto a command line, where `ps` would show them. skopeo uses them for basic
 * authentication and, when the registry answers with a bearer challenge, to get its token. Anonymous access is
 * explicit (`--no-creds`), so credentials the host keeps for its own use (`~/.docker/config.json`,
 * `$XDG_RUNTIME_DIR/containers/auth.json`) are never sent to a registry a user named.
 */
export async function withRegistryAccess<T>(
  reference: ImageReference,
  options: { credentials?: RegistryCredentials; insecureRegistries?: readonly string[] },
  use: (access: RegistryAccess) => Promise<T>,
): Promise<T> {
  const tlsVerify = !(options.insecureRegistries ?? []).includes(reference.registry);
  const { credentials } = options;
  if (!credentials) return use({ tlsVerify, authFile: null });
  checkCredentials(credentials);
  const dir = await mkdtemp(join(tmpdir(), 'sandboxd-registry-auth-'));
  try {
    const authFile = join(dir, 'auth.json');
    const auth = Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64');
    await writeFile(authFile, JSON.stringify({ auths: { [reference.registry]: { auth } } }), { mode: 0o600, flag: 'wx' });
    return await use({ tlsVerify, authFile });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function checkCredentials(credentials: RegistryCredentials): void {
  const { username, password } = credentials;
  if (typeof username !== 'string' || typeof password !== 'string' || username === '' || password === '') {
    throw new OciImageError('OCI_INPUT_INVALID', 'registry credentials need a non-empty username and password', { step: 'resolve' });
  }
  // The auth file's `user:password` is split at the first colon; control characters have no place in either.
  if (username.includes(':')) throw new OciImageError('OCI_INPUT_INVALID', 'a registry username cannot contain ":"', { step: 'resolve' });
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(username + password)) throw new OciImageError('OCI_INPUT_INVALID', 'registry credentials cannot contain control characters', { step: 'resolve' });
}
