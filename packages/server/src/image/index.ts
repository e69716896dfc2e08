/**
 * Guest image build: a bootable kernel + initramfs + ext4 root filesystem for the VM driver, built from the
 * host's Debian packages and cached by content hash. The boot contract the image implements is documented in
 * packages/server/images/README.md.
 */
export { ensureGuestImage } from './ensure-guest-image.ts';
export {
  BROWSER_DEVTOOLS_PORT,
  BROWSER_START_PATH,
  browserFlavour,
  DESKTOP_START_PATH,
  desktopFlavour,
  DOCKER_START_PATH,
  dockerFlavour,
  FLAVOURS,
} from './flavours.ts';
export { defaultCacheDir } from './cache-layout.ts';
export { MARK_INTERVAL_MS, markInUse, pruneGuestImages, unusedEntries } from './cache-retention.ts';
export { ImageBuildError, type ImageBuildErrorCode } from './errors.ts';
export { BOOT_CONTRACT_VERSION, GUEST_AGENT_PATH, readManifest, type GuestImageManifest } from './guest-layer.ts';
export type { EnsureGuestImageOptions, FlavourFile, GuestImage, ImageBuildProgress, ImageFlavour, ImageLayer } from './types.ts';
