/** Reading one manifest: null when there is none, ARTIFACT_CORRUPT when it is not one. */
import { ArtifactError } from './artifact-errors.ts';
import { artifactLabel, manifestKey, type ArtifactRef } from './artifact-ref.ts';
import type { ArtifactStoreContext } from './store-context.ts';
import { parseManifest, type ArtifactManifest } from './manifest.ts';

export async function readManifest(context: ArtifactStoreContext, ref: ArtifactRef, doing: string, signal?: AbortSignal): Promise<ArtifactManifest | null> {
  const object = await context.call(doing, () => context.objects.get(manifestKey(ref)), signal);
  if (!object) return null;
  const manifest = parseManifest(object.body, ref);
  if (typeof manifest === 'string') throw new ArtifactError('ARTIFACT_CORRUPT', `${doing}: the manifest of ${artifactLabel(ref)} is unreadable: ${manifest}`);
  return manifest;
}
