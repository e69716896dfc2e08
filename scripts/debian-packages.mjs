// The Debian packages sandboxd needs on the machine it runs on: what scripts/setup.mjs installs for npm start, and
// what the Debian package (scripts/build-deb.mjs) depends on. One list, so the two cannot drift apart.

/**
 * Debian packages the engine needs at run time and to build the guest image; skopeo and umoci pull and unpack
 * OCI images for templates (`src/image/oci/`).
 */
export const ENGINE_PACKAGES = [
  'qemu-system-x86',
  'qemu-utils',
  'linux-image-amd64',
  'busybox-static',
  'mmdebstrap',
  'e2fsprogs',
  'cpio',
  'xz-utils',
  'nftables',
  'ca-certificates',
  'util-linux',
  'tar',
  'skopeo',
  'umoci',
];
