import { strict as assert } from 'node:assert';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { hostAptSources, normalizeMirrors } from '../../src/image/apt-sources.ts';

describe('host apt sources', () => {
  let aptDir: string;
  before(async () => {
    aptDir = await mkdtemp(join(tmpdir(), 'sandboxd-apt-test-'));
    await mkdir(join(aptDir, 'sources.list.d'));
  });
  after(async () => {
    await rm(aptDir, { recursive: true, force: true });
  });

  test('enabled bookworm entries are read from deb822 and one-line files; others are skipped', async () => {
    await writeFile(
      join(aptDir, 'sources.list.d', 'debian.sources'),
      [
        'Types: deb',
        '# a comment',
        'URIs: http://mirror.example/debian',
        'Suites: bookworm bookworm-updates',
        'Components: main',
        'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg',
        '',
        'Types: deb-src',
        'URIs: http://mirror.example/debian',
        'Suites: bookworm',
        'Components: main',
        '',
        'Types: deb',
        'URIs: http://disabled.example/debian',
        'Suites: bookworm',
        'Components: main',
        'Enabled: no',
      ].join('\n'),
    );
    await writeFile(
      join(aptDir, 'sources.list'),
      'deb [arch=amd64] http://security.example/debian-security bookworm-security main contrib # note\ndeb http://mirror.example/debian trixie main\n',
    );
    await writeFile(join(aptDir, 'sources.list.d', 'vendor.list.disabled'), 'deb http://vendor.example/ bookworm main\n');
    assert.deepEqual(await hostAptSources('bookworm', aptDir), [
      'deb http://security.example/debian-security bookworm-security main contrib',
      'deb http://mirror.example/debian bookworm main',
      'deb http://mirror.example/debian bookworm-updates main',
    ]);
  });

  test("without an entry for the main suite, Debian's mirror is used", async () => {
    const empty = await mkdtemp(join(tmpdir(), 'sandboxd-apt-empty-'));
    try {
      assert.deepEqual(await hostAptSources('bookworm', empty), ['deb http://deb.debian.org/debian bookworm main']);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  test('a bare mirror URL becomes a main-suite entry', () => {
    assert.deepEqual(normalizeMirrors(['http://m.example/debian', 'deb  http://m.example/debian-security  bookworm-security main'], 'bookworm'), [
      'deb http://m.example/debian bookworm main',
      'deb http://m.example/debian-security bookworm-security main',
    ]);
  });
});
