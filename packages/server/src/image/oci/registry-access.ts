import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForbiddenHostError, resolvePublicHost, UnresolvableHostError } from '../../host/public-host.ts';
import { OciImageError } from './errors.ts';
import { PULL_USER, pullGuard, type PullDestination } from './pull-guard.ts';
import type { ImageReference } from './reference.ts';
import type { PullSandbox } from './skopeo.ts';
import type { RegistryCredentials } from './types.ts';

/** How skopeo is to reach one registry: its transport security, its credentials, and the sandbox it runs in. */
export interface RegistryAccess {
  /** `--tls-verify` flag for `skopeo inspect` (and `--src-tls-verify` for `skopeo copy`). */
  tlsVerify: boolean;
  /** An auth file holding the credentials (0600, in a 0700 directory, both the pull user's), or null for anonymous access. */
  authFile: string | null;
  /** Where skopeo runs: as the pull user, with the registry's name pinned (`skopeo.ts`). */
  sandbox: PullSandbox;
}

/** What decides where a pull may connect. */
export interface RegistryAccessOptions {
  credentials?: RegistryCredentials;
  /** Registries (`host[:port]`, as references name them) spoken to over plain HTTP or unverified TLS; the operator's, so trusted. */
  insecureRegistries?: readonly string[];
  /** Any registry may be on a loopback, private, link-local or metadata address (SANDBOXD_TEMPLATE_REGISTRY_ALLOW_PRIVATE). */
  allowPrivateRegistries?: boolean;
  /** Resolves the registry's name (default the system's resolver). */
  resolveHost?: (host: string) => Promise<string[]>;
}

/** The registry a reference names, as a pull connects to it. */
export interface RegistryTarget {
  /** The host name (or address) skopeo connects to: Docker Hub's `docker.io` is served by `registry-1.docker.io`. */
  host: string;
  /** Its addresses, checked; skopeo is pinned to them. */
  addresses: string[];
  /** The ports it is spoken to on: the reference's, else 443 (and 80 for a plain-HTTP registry). */
  ports: number[];
  /** Trusted by the operator: its addresses may be private, and the pull guard lets them through. */
  trusted: boolean;
}

/** containers/image speaks to Docker Hub's registry under another name than its references use. */
const DOCKER_HUB_NAMES = new Set(['docker.io', 'index.docker.io']);
const DOCKER_HUB_REGISTRY = 'registry-1.docker.io';

/**
 * Resolves and checks the registry `reference` names. A registry the operator did not trust must not be, or
 * resolve to, an address the address policy forbids (`OCI_REGISTRY_FORBIDDEN`); one that does not resolve is
 * `OCI_REGISTRY_UNREACHABLE`. Nothing is contacted.
 */
export async function checkRegistry(reference: ImageReference, options: RegistryAccessOptions): Promise<RegistryTarget> {
  const insecure = (options.insecureRegistries ?? []).includes(reference.registry);
  const trusted = insecure || options.allowPrivateRegistries === true;
  const [, name = reference.registry, port] = /^(.*?)(?::(\d+))?$/.exec(reference.registry) ?? [];
  const host = DOCKER_HUB_NAMES.has(name) ? DOCKER_HUB_REGISTRY : name;
  let addresses: string[];
  try {
    addresses = await resolvePublicHost(host, {
      allowPrivate: trusted,
      setting: 'SANDBOXD_TEMPLATE_REGISTRY_ALLOW_PRIVATE',
      ...(options.resolveHost ? { lookup: options.resolveHost } : {}),
    });
  } catch (error) {
    if (error instanceof ForbiddenHostError)
      throw new OciImageError('OCI_REGISTRY_FORBIDDEN', `the registry ${reference.registry} cannot be used: ${error.message}`, {
        step: 'resolve',
        cause: error,
      });
    if (error instanceof UnresolvableHostError)
      throw new OciImageError('OCI_REGISTRY_UNREACHABLE', `the registry ${reference.registry} cannot be used: ${error.message}`, {
        step: 'resolve',
        cause: error,
      });
    throw error;
  }
  const ports = port !== undefined ? [Number(port)] : insecure ? [443, 80] : [443];
  return { host, addresses, ports, trusted };
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
 * Runs `use` with the access to `reference`'s registry, then removes the pull's scratch directory (and the
 * credentials in it) and the guard's allowance, whatever happened.
 *
 * The registry is checked and pinned first (`checkRegistry`); the pull guard is installed, letting a trusted
 * registry's checked addresses through (`pull-guard.ts`). The scratch directory belongs to the pull user:
 * skopeo's home, the `/etc/hosts` it sees and the auth file.
 *
 * Credentials go into a containers-auth.json file (`{"auths":{"<registry>":{"auth":base64(user:password)}}}`)
 * that only root and the pull user can read, never onto a command line, where `ps` would show them. skopeo uses
 * them for basic authentication and, when the registry answers with a bearer challenge, to get its token.
 * Anonymous access is explicit (`--no-creds`), so credentials the host keeps for its own use
 * (`~/.docker/config.json`, `$XDG_RUNTIME_DIR/containers/auth.json`) are never sent to a registry a user named.
 */
export async function withRegistryAccess<T>(
  reference: ImageReference,
  options: RegistryAccessOptions,
  use: (access: RegistryAccess) => Promise<T>,
): Promise<T> {
  const tlsVerify = !(options.insecureRegistries ?? []).includes(reference.registry);
  const { credentials } = options;
  if (credentials) checkCredentials(credentials);
  const target = await checkRegistry(reference, options);
  const destinations: PullDestination[] = target.trusted ? target.addresses.flatMap((address) => target.ports.map((port) => ({ address, port }))) : [];
  const guard = await pullGuard.enter(destinations).catch((error: unknown) => {
    const notRoot = typeof process.getuid === 'function' && process.getuid() !== 0;
    throw new OciImageError(
      notRoot ? 'OCI_NOT_ROOT' : 'OCI_COMMAND_FAILED',
      `pulls run only behind their network guard (the ${PULL_USER} user and an nftables table), which cannot be set up${notRoot ? ': run the build as root' : ''}: ${(error as Error).message}`,
      { step: 'resolve', cause: error },
    );
  });
  let dir: string | undefined;
  try {
    dir = await mkdtemp(join(tmpdir(), 'sandboxd-registry-auth-'));
    const { uid, gid } = guard.user;
    await chown(dir, uid, gid);
    const hostsFile = join(dir, 'hosts');
    await writeFile(hostsFile, hostsFileText(target), { mode: 0o644 });
    let authFile: string | null = null;
    if (credentials) {
      authFile = join(dir, 'auth.json');
      const auth = Buffer.from(`${credentials.username}:${credentials.password}`, 'utf8').toString('base64');
      await writeFile(authFile, JSON.stringify({ auths: { [reference.registry]: { auth } } }), { mode: 0o600, flag: 'wx' });
      await chown(authFile, uid, gid);
    }
    return await use({ tlsVerify, authFile, sandbox: { uid, gid, hostsFile, homeDir: dir } });
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
    await guard.release();
  }
}

/** The `/etc/hosts` of a pull: the registry's name at its checked addresses (nothing when it is an address). */
export function hostsFileText(target: Pick<RegistryTarget, 'host' | 'addresses'>): string {
  const lines = ['# sandboxd template pull: the registry pinned to the addresses that were checked'];
  if (!target.addresses.includes(target.host)) for (const address of target.addresses) lines.push(`${address}\t${target.host}`);
  return `${lines.join('\n')}\n`;
}

function checkCredentials(credentials: RegistryCredentials): void {
  const { username, password } = credentials;
  if (typeof username !== 'string' || typeof password !== 'string' || username === '' || password === '') {
    throw new OciImageError('OCI_INPUT_INVALID', 'registry credentials need a non-empty username and password', { step: 'resolve' });
  }
  // The auth file's `user:password` is split at the first colon; control characters have no place in either.
  if (username.includes(':')) throw new OciImageError('OCI_INPUT_INVALID', 'a registry username cannot contain ":"', { step: 'resolve' });
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(username + password))
    throw new OciImageError('OCI_INPUT_INVALID', 'registry credentials cannot contain control characters', { step: 'resolve' });
}
