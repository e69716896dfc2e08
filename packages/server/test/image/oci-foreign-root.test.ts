/**
 * The `runtime` step on crafted root filesystems, without a VM: an image is untrusted, and its symlinks must
 * never lead the build (which runs as root on the host) out of the tree; the agent's Python and shell are chosen
 * from what the image has, without running anything of it.
 */
import { strict as assert } from 'node:assert';
import { lstat, mkdir, mkdtemp, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCommand } from '../../src/image/run-command.ts';
import { injectRuntime, type InjectRuntimeInput } from '../../src/image/oci/inject-runtime.ts';
import { OciImageError } from '../../src/image/oci/index.ts';

describe('injecting the runtime into a foreign root filesystem', () => {
  let scratch: string;
  let outside: string;
  let runtimeTar: string;

  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'sandboxd-foreign-root-'));
    outside = join(scratch, 'outside');
    await mkdir(join(outside, 'dir'), { recursive: true });
    await writeFile(join(outside, 'hosts'), 'the host file\n');
    await mkdir(join(scratch, 'runtime-src', 'runtime', 'bin'), { recursive: true });
    await writeFile(join(scratch, 'runtime-src', 'runtime', 'bin', 'python3'), '#!/bin/sh\n', { mode: 0o755 });
    runtimeTar = join(scratch, 'runtime.tar');
    await runCommand('tar', ['--create', '--file', runtimeTar, '--directory', join(scratch, 'runtime-src'), '.']);
  });

  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  async function tree(name: string, build: (root: string) => Promise<void>): Promise<string> {
    const root = join(scratch, name);
    await mkdir(root);
    await build(root);
    return root;
  }

  function input(root: string, env: Record<string, string> = {}): InjectRuntimeInput {
    return {
      tree: root,
      runtimeTar,
      agentBundle: Buffer.from('// agent\n'),
      guestInit: Buffer.from('#!/opt/sandboxd/runtime/bin/sh\n'),
      config: { env, workingDir: null, user: null, entrypoint: [], cmd: [] },
    };
  }

  async function executable(path: string, text = '\x7fELF'): Promise<void> {
    await mkdir(join(path, '..'), { recursive: true });
    await writeFile(path, text, { mode: 0o755 });
  }

  test('symlinks of the image that point out of the tree are replaced, never written through', async () => {
    const root = await tree('escapes', async (r) => {
      await mkdir(join(r, 'etc'));
      await symlink(join(outside, 'hosts'), join(r, 'etc', 'hosts'));
      await mkdir(join(r, 'opt'));
      await symlink(join(outside, 'dir'), join(r, 'opt', 'sandboxd'));
      await symlink('/var/tmp', join(r, 'tmp'));
      await symlink(outside, join(r, 'run'));
      await executable(join(r, 'bin', 'sh'));
    });
    await injectRuntime(input(root));
    assert.equal(await readFile(join(outside, 'hosts'), 'utf8'), 'the host file\n', 'the host file is untouched');
    assert.equal(await readlink(join(root, 'etc', 'hosts')), '/run/hosts');
    assert.equal((await lstat(join(root, 'opt', 'sandboxd'))).isDirectory(), true);
    assert.equal(await readFile(join(root, 'opt', 'sandboxd', 'agent.mjs'), 'utf8'), '// agent\n');
    await assert.rejects(lstat(join(outside, 'dir', 'agent.mjs')), /ENOENT/, 'nothing was written outside');
    for (const point of ['tmp', 'run', 'dev', 'proc', 'sys', 'root']) assert.equal((await lstat(join(root, point))).isDirectory(), true, point);
    assert.equal((await lstat(join(root, 'opt', 'sandboxd', 'runtime', 'bin', 'python3'))).isFile(), true, 'the runtime is unpacked');
  });

  test('an image whose /etc is a symlink is refused', async () => {
    const root = await tree('etc-link', async (r) => {
      await symlink(outside, join(r, 'etc'));
    });
    await assert.rejects(injectRuntime(input(root)), (error: unknown) => {
      assert.ok(error instanceof OciImageError);
      assert.equal(error.code, 'OCI_UNSUPPORTED');
      assert.match(error.message, /\/etc is a symlink/);
      return true;
    });
  });

  test("the user's Python is the image's python3 on its PATH, through its links, else the runtime's", async () => {
    const modern = await tree('python-modern', async (r) => {
      await executable(join(r, 'usr', 'local', 'bin', 'python3.12'));
      await symlink('python3.12', join(r, 'usr', 'local', 'bin', 'python3'));
      await executable(join(r, 'bin', 'bash'));
      await executable(join(r, 'bin', 'sh'));
    });
    const chosen = await injectRuntime(input(modern, { PATH: '/nowhere:/usr/local/bin:/usr/bin', LANG: 'C' }));
    assert.deepEqual(chosen, { userPython: '/usr/local/bin/python3', userPythonSource: 'image', shell: '/bin/bash' });
    assert.deepEqual((await readFile(join(modern, 'opt', 'sandboxd', 'agent-args'), 'utf8')).split('\n'), [
      '--python',
      '/usr/local/bin/python3',
      '--helper-python',
      '/opt/sandboxd/runtime/bin/python3',
      '--shell',
      '/bin/bash',
      '--env-file',
      '/opt/sandboxd/image-env.json',
      '',
    ]);
    assert.deepEqual(JSON.parse(await readFile(join(modern, 'opt', 'sandboxd', 'image-env.json'), 'utf8')), {
      PATH: '/nowhere:/usr/local/bin:/usr/bin',
      LANG: 'C',
    });

    // An absolute link is resolved inside the tree (to a Python 2 here), not on the host; no shell at all.
    const old = await tree('python-old', async (r) => {
      await executable(join(r, 'usr', 'bin', 'python2.7'));
      await mkdir(join(r, 'bin'), { recursive: true });
      await symlink('/usr/bin/python2.7', join(r, 'bin', 'python3'));
    });
    assert.deepEqual(await injectRuntime(input(old, { PATH: '/bin' })), {
      userPython: '/opt/sandboxd/runtime/bin/python3',
      userPythonSource: 'runtime',
      shell: '/opt/sandboxd/runtime/bin/sh',
    });

    // A python3 that is not executable, or a link that leaves the tree for the host's python3, does not count.
    const broken = await tree('python-broken', async (r) => {
      await mkdir(join(r, 'usr', 'bin'), { recursive: true });
      await writeFile(join(r, 'usr', 'bin', 'python3'), 'not executable');
      await mkdir(join(r, 'usr', 'local', 'bin'), { recursive: true });
      await symlink('../../../../../../../usr/bin/python3', join(r, 'usr', 'local', 'bin', 'python3'));
    });
    assert.equal((await injectRuntime(input(broken))).userPythonSource, 'runtime');
  });
});
