/**
 * Guest images from OCI images (issue 16, templates): `buildOciImage` pulls an image with skopeo, unpacks it with
 * umoci, injects the agent with a self-contained runtime and boots it with the default image's kernel. The
 * foreign-root contract is in packages/server/images/README.md.
 */
export { buildOciImage, type OciImageManifest } from './build-oci-image.ts';
export { OciImageError, type OciImageErrorCode } from './errors.ts';
export { parseImageReference, type ImageReference } from './reference.ts';
export { GUEST_RUNTIME } from './runtime-layer.ts';
export {
  OCI_BUILD_STEPS,
  type BuildOciImageOptions,
  type OciBuildProgress,
  type OciBuildStep,
  type OciGuestImage,
  type OciImageConfig,
  type RegistryCredentials,
} from './types.ts';
