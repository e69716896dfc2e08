/**
 * What names an artifact and where its objects live. Every key the artifact store writes is built here:
 *
 * - `artifacts/chunks/<first 2 hex>/<sha256 hex>`: a chunk's raw bytes, named by their SHA-256;
 * - `artifacts/manifests/<kind>/<id>.json`: the manifest, which alone makes an artifact exist.
 */

/** The kinds of artifact the engine keeps in the object store. */
export const ARTIFACT_KINDS = ['image', 'template', 'variant', 'snapshot', 'pause', 'volume'] as const;
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** One artifact: `id` is `[A-Za-z0-9._-]` segments joined by `/`, at most 200 characters (e.g. `vm_x/layer-2`). */
export interface ArtifactRef {
  kind: ArtifactKind;
  id: string;
}

export const MAX_ARTIFACT_ID_LENGTH = 200;
export const CHUNKS_PREFIX = 'artifacts/chunks/';
export const MANIFESTS_PREFIX = 'artifacts/manifests/';

const SEGMENT = /^[A-Za-z0-9._-]+$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;

function validPath(value: string, maxLength: number): boolean {
  return (
    typeof value === 'string' &&
    value.length > 0 &&
    value.length <= maxLength &&
    value.split('/').every((segment) => SEGMENT.test(segment) && segment !== '.' && segment !== '..')
  );
}

/** Throws unless `ref` is a known kind and a valid id (a bad ref is a programming error: ids come from the engine). */
export function assertArtifactRef(ref: ArtifactRef): void {
  if (!ARTIFACT_KINDS.includes(ref?.kind)) throw new Error(`bad artifact kind ${JSON.stringify(ref?.kind)}: use one of ${ARTIFACT_KINDS.join(', ')}`);
  if (!validPath(ref.id, MAX_ARTIFACT_ID_LENGTH)) {
    throw new Error(
      `bad artifact id ${JSON.stringify(ref.id)}: use 1-${MAX_ARTIFACT_ID_LENGTH} characters of /-separated [A-Za-z0-9._-] segments, none of them "." or ".."`,
    );
  }
}

/** Throws unless `name` can name a file inside an artifact's directory (same rules as an id, at most 255 characters). */
export function assertArtifactFileName(name: string): void {
  if (!validPath(name, 255)) {
    throw new Error(`bad artifact file name ${JSON.stringify(name)}: use /-separated [A-Za-z0-9._-] segments, none of them "." or ".."`);
  }
}

/** `snapshot/vm_x`: how messages name an artifact. */
export function artifactLabel(ref: ArtifactRef): string {
  return `${ref.kind}/${ref.id}`;
}

export function manifestKey(ref: ArtifactRef): string {
  return `${MANIFESTS_PREFIX}${ref.kind}/${ref.id}.json`;
}

export function manifestsPrefix(kind: ArtifactKind): string {
  return `${MANIFESTS_PREFIX}${kind}/`;
}

export function chunkKey(sha256: string): string {
  return `${CHUNKS_PREFIX}${sha256.slice(0, 2)}/${sha256}`;
}

/** The chunk's SHA-256 from its key, or null for a key that is not a chunk's (something else under the prefix). */
export function chunkHashOfKey(key: string): string | null {
  const match = /^artifacts\/chunks\/([0-9a-f]{2})\/([0-9a-f]{64})$/.exec(key);
  return match && match[2]!.startsWith(match[1]!) ? match[2]! : null;
}

export function isSha256Hex(value: unknown): value is string {
  return typeof value === 'string' && SHA256_HEX.test(value);
}
