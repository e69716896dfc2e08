import { sha256 } from '../hashing.ts';
import { classifyRegistryFailure, OciImageError } from './errors.ts';
import type { ImageReference } from './reference.ts';
import { inspectOptions, type RegistryAccess } from './registry-access.ts';
import { runSkopeo } from './skopeo.ts';

/** The manifest a reference stands for on linux/amd64. */
export interface ResolvedManifest {
  /** Digest of the image manifest to pull (an index was resolved to its linux/amd64 entry). */
  digest: string;
  /** Digest of the index (manifest list) the reference named, when it named one. */
  indexDigest: string | null;
}

const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);
const MANIFEST_TYPES = new Set(['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json']);
const DIGEST = /^sha256:[a-f0-9]{64}$/;

/**
 * The `resolve` step: asks the registry for the reference's manifest (`skopeo inspect --raw`, the exact bytes) and
 * returns the digest of the linux/amd64 image manifest it stands for, which the pull then fetches by digest,
 * so a tag moved in between cannot change what is built. A pinned digest is checked against the bytes.
 */
export async function resolveManifest(
  reference: ImageReference,
  access: RegistryAccess,
  options: { signal?: AbortSignal; onLine?: (line: string) => void } = {},
): Promise<ResolvedManifest> {
  const raw = await runSkopeo(
    access.sandbox,
    ['inspect', '--raw', '--retry-times', '2', ...inspectOptions(access), `docker://${reference.canonical}`],
    options,
  ).catch((error: unknown) => {
    throw classifyRegistryFailure(error, 'resolve', `cannot resolve ${reference.canonical}`);
  });
  const digest = `sha256:${sha256(Buffer.from(raw, 'utf8'))}`;
  if (reference.digest?.startsWith('sha256:') && reference.digest !== digest) {
    throw new OciImageError('OCI_COMMAND_FAILED', `the registry's manifest for ${reference.canonical} has digest ${digest}, not the one asked for`, {
      step: 'resolve',
    });
  }
  let manifest: { schemaVersion?: unknown; mediaType?: unknown; manifests?: unknown; config?: unknown };
  try {
    manifest = JSON.parse(raw) as typeof manifest;
  } catch (error) {
    throw new OciImageError('OCI_UNSUPPORTED', `the registry's manifest for ${reference.canonical} is not JSON`, { step: 'resolve', cause: error });
  }
  if (manifest.schemaVersion !== 2) {
    throw new OciImageError(
      'OCI_UNSUPPORTED',
      `${reference.canonical} has a schema ${String(manifest.schemaVersion)} manifest; only schema 2 (OCI, Docker v2) images are supported`,
      { step: 'resolve' },
    );
  }
  const mediaType =
    typeof manifest.mediaType === 'string'
      ? manifest.mediaType
      : Array.isArray(manifest.manifests)
        ? 'application/vnd.oci.image.index.v1+json'
        : 'application/vnd.oci.image.manifest.v1+json';
  if (MANIFEST_TYPES.has(mediaType)) return { digest, indexDigest: null };
  if (!INDEX_TYPES.has(mediaType) || !Array.isArray(manifest.manifests)) {
    throw new OciImageError('OCI_UNSUPPORTED', `${reference.canonical} is a ${mediaType}, not an image`, { step: 'resolve' });
  }
  const entries = manifest.manifests as { digest?: unknown; platform?: { os?: unknown; architecture?: unknown } }[];
  const entry = entries.find((candidate) => candidate.platform?.os === 'linux' && candidate.platform.architecture === 'amd64');
  if (!entry || typeof entry.digest !== 'string' || !DIGEST.test(entry.digest)) {
    const platforms = entries.map((candidate) => `${String(candidate.platform?.os)}/${String(candidate.platform?.architecture)}`).join(', ');
    throw new OciImageError('OCI_UNSUPPORTED', `${reference.canonical} has no linux/amd64 image (it has ${platforms || 'none'})`, { step: 'resolve' });
  }
  return { digest: entry.digest, indexDigest: digest };
}
