/** The artifact store (templates, snapshots, pause images, volumes in the object store) and a node's local cache of them. */
export { ArtifactCache, type ArtifactCacheOptions, type ArtifactCacheStats } from './local-cache.ts';
export { ArtifactError, type ArtifactErrorCode } from './artifact-errors.ts';
export { ARTIFACT_KINDS, artifactLabel, type ArtifactKind, type ArtifactRef } from './artifact-ref.ts';
export { ArtifactStore, DEFAULT_CHUNK_BYTES, type ArtifactStoreOptions, type ArtifactUsage } from './artifact-store.ts';
export type { GarbageCollection } from './collect-garbage.ts';
export type { DownloadOptions } from './download-artifact.ts';
export type { ArtifactFile, ArtifactManifest } from './manifest.ts';
export type { UploadFile, UploadOptions } from './upload-artifact.ts';
