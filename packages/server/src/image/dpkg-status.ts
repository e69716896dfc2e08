import { readFile } from 'node:fs/promises';

/**
 * Versions of the named packages installed in a root filesystem, read from its `/var/lib/dpkg/status`
 * (missing packages are left out). Used to record e.g. the guest's nodejs version in the manifest.
 */
export async function installedVersions(statusPath: string, names: readonly string[]): Promise<Record<string, string>> {
  const text = await readFile(statusPath, 'utf8').catch(() => '');
  const versions: Record<string, string> = {};
  for (const stanza of text.split(/\n\n+/)) {
    const name = /^Package: (.+)$/m.exec(stanza)?.[1];
    const version = /^Version: (.+)$/m.exec(stanza)?.[1];
    const installed = /^Status: .* installed$/m.test(stanza);
    if (name && version && installed && names.includes(name)) versions[name] = version;
  }
  return versions;
}
