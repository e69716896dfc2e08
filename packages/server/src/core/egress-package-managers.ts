/**
 * The package registries `allow_package_managers` opens, by name: a guest that may install packages reaches
 * these hosts (HTTP and HTTPS, and their DNS names) and nothing else because of that flag. A name matches
 * itself and its subdomains (`*.`), so mirrors a registry redirects to stay inside the list. Keep this list
 * and the "Egress policies" section of docs/guides/egress-and-vault.md equal.
 */
export const PACKAGE_MANAGER_DOMAINS: readonly { domain: string; registry: string }[] = [
  // Debian (apt): the CDN front of the archive and the security archive.
  { domain: 'deb.debian.org', registry: 'Debian' },
  { domain: 'security.debian.org', registry: 'Debian' },
  { domain: 'debian.map.fastlydns.net', registry: 'Debian' },
  // PyPI (pip): the index and the file host it redirects downloads to.
  { domain: 'pypi.org', registry: 'PyPI' },
  { domain: 'files.pythonhosted.org', registry: 'PyPI' },
  // npm: the registry (tarballs come from the same host).
  { domain: 'registry.npmjs.org', registry: 'npm' },
  { domain: 'registry.yarnpkg.com', registry: 'npm' },
];
