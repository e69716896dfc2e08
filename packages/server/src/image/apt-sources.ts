import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** Used when the host has no usable entry for the suite (e.g. a non-Debian host). */
const FALLBACK_MIRROR = 'http://deb.debian.org/debian';

/**
 * The host's enabled Debian sources for `suite` and its `-updates`/`-security` suites, as one-line entries
 * for mmdebstrap (`deb URI SUITE COMPONENTS`). Reading them from apt's configuration means the guest uses
 * whatever mirror (or proxy, or local snapshot) the host was set up with. Both the one-line `.list` format and
 * deb822 `.sources` are read; deb-src, disabled and non-HTTP entries are skipped.
 */
export async function hostAptSources(suite: string, aptDir = '/etc/apt'): Promise<string[]> {
  const texts: { name: string; text: string }[] = [];
  const main = await readFile(join(aptDir, 'sources.list'), 'utf8').catch(() => undefined);
  if (main !== undefined) texts.push({ name: 'sources.list', text: main });
  const partsDir = join(aptDir, 'sources.list.d');
  const names = (await readdir(partsDir).catch(() => [] as string[])).filter((name) => name.endsWith('.list') || name.endsWith('.sources')).sort();
  for (const name of names) texts.push({ name, text: await readFile(join(partsDir, name), 'utf8').catch(() => '') });

  const entries: string[] = [];
  for (const { name, text } of texts) entries.push(...(name.endsWith('.sources') ? parseDeb822(text) : parseOneLine(text)));
  const wanted = entries.filter((entry) => {
    const [, uri = '', entrySuite = ''] = entry.split(' ');
    return /^https?:\/\//.test(uri) && (entrySuite === suite || entrySuite.startsWith(`${suite}-`));
  });
  const unique = [...new Set(wanted)];
  if (!unique.some((entry) => entry.split(' ')[2] === suite)) unique.unshift(`deb ${FALLBACK_MIRROR} ${suite} main`);
  return unique;
}

/** Turns `mirrors` option values into one-line entries: a bare URL becomes `deb URL <suite> main`. */
export function normalizeMirrors(mirrors: readonly string[], suite: string): string[] {
  return mirrors.map((mirror) => (/^https?:\/\/\S+$/.test(mirror.trim()) ? `deb ${mirror.trim()} ${suite} main` : mirror.trim().replace(/\s+/g, ' ')));
}

function parseOneLine(text: string): string[] {
  const entries: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw
      .replace(/#.*/, '')
      .replace(/\[[^\]]*\]/, ' ')
      .trim();
    const [type, uri, suite, ...components] = line.split(/\s+/);
    if (type === 'deb' && uri && suite && components.length > 0) entries.push(`deb ${uri} ${suite} ${components.join(' ')}`);
  }
  return entries;
}

function parseDeb822(text: string): string[] {
  const entries: string[] = [];
  const withoutComments = text
    .split('\n')
    .filter((line) => !line.startsWith('#'))
    .join('\n');
  for (const stanza of withoutComments.split(/\n\s*\n/)) {
    const fields = new Map<string, string>();
    let current = '';
    for (const line of stanza.split('\n')) {
      if (/^\s/.test(line) && current) fields.set(current, `${fields.get(current) ?? ''} ${line.trim()}`);
      else {
        const colon = line.indexOf(':');
        if (colon < 0) continue;
        current = line.slice(0, colon).trim().toLowerCase();
        fields.set(current, line.slice(colon + 1).trim());
      }
    }
    const words = (field: string): string[] => (fields.get(field) ?? '').split(/\s+/).filter(Boolean);
    if (!words('types').includes('deb') || /^(no|false)$/i.test(fields.get('enabled') ?? 'yes')) continue;
    for (const uri of words('uris')) for (const suite of words('suites')) entries.push(`deb ${uri} ${suite} ${words('components').join(' ')}`);
  }
  return entries;
}
