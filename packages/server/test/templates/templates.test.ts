/**
 * Templates built from OCI images, through HTTP on real VMs (issue 16): Debian's docker-registry on loopback
 * serves a Debian image this test makes itself (from the default image's base layer, as test/image does), a real
 * `git daemon` serves a repository; the server builds a template from both (pull, bootable image, build VM, clone
 * into /workspace, post-build command, capture, snapshot), a VM starts from it by name and sees the image's
 * files, the clone and what the command made. Bad input is refused with 4xx before anything runs; failing
 * builds (a tag the registry lacks; a command that exits 3) end `failed` with the step and the reason in their
 * error and log; a template cannot be deleted while a VM started from it runs; another user gets 404.
 * One successful build (two cold boots of the image: the build VM and its snapshot) and one failed in the VM.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { imagesDir, layerLockPath } from '../../src/image/cache-layout.ts';
import { pullLayoutDir } from '../../src/image/oci/pull.ts';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { ADDED_FILE, ADDED_TEXT, addDebianImage, commonBaseTar, createLayout, DEBIAN_TAG, type TestLayout } from '../image/oci-image-fixture.ts';
import { pushImage, startRegistry, type TestRegistry } from '../image/registry-fixture.ts';
import { startGitServer, type TestGitServer } from './git-fixture.ts';

const README = `# sample ${Date.now()}\n`;
/** Handed to the post-build command through build_args.envs: it must never come back in a record or a log. */
const BUILD_SECRET = `secret-${createHash('sha256').update(String(Math.random())).digest('hex').slice(0, 16)}`;
const BUILD_TIMEOUT_MS = 15 * 60_000;

describe('templates from OCI images on real VMs', { timeout: 40 * 60_000 }, () => {
  let server: TestServer;
  let registry: TestRegistry;
  let layout: TestLayout;
  let git: TestGitServer;
  let alice: { apiKey: string };
  let bob: { apiKey: string };
  let reference: string;
  let digest: string;
  let templateId: string;
  let missingTagId: string;
  let vmId: string;
  let sessionId: string;
  const digests = new Set<string>();

  const as = (who: { apiKey: string }) => ({ apiKey: who.apiKey });

  /** Polls the build's log until it is over; answers the record and every line. */
  const waitForBuild = async (id: string): Promise<{ template: any; lines: string[]; ms: number }> => {
    const started = Date.now();
    const lines: string[] = [];
    let afterId = 0;
    for (;;) {
      // Long polling: the server holds the request until there is a new line or the build ended.
      const page = await call(server, 'GET', `/v1/templates/${id}/logs?after=${afterId}&wait_seconds=10`, as(alice));
      assert.equal(page.status, 200, page.text);
      lines.push(...page.body.lines.map((line: { line: string }) => line.line));
      afterId = page.body.next_after;
      if (page.body.status !== 'building') {
        const template = await call(server, 'GET', `/v1/templates/${id}`, as(alice));
        assert.equal(template.status, 200, template.text);
        return { template: template.body, lines, ms: Date.now() - started };
      }
      assert.ok(Date.now() - started < BUILD_TIMEOUT_MS, `template ${id} still building: ${lines.slice(-20).join('\n')}`);
    }
  };

  const bash = async (command: string) => {
    const answer = await call(server, 'POST', '/execute', { ...as(alice), json: { session_id: sessionId, language: 'bash', command, timeout: 120 } });
    assert.equal(answer.status, 200, answer.text);
    assert.equal(answer.body.exit_code, 0, `${command}: ${answer.body.stderr}`);
    return answer.body.stdout.trim() as string;
  };

  before(async () => {
    [registry, layout, git] = await Promise.all([startRegistry(), createLayout(), startGitServer('sample', { 'README.md': README })]);
    await addDebianImage(layout, await commonBaseTar());
    digest = await pushImage(registry, layout.dir, DEBIAN_TAG, 'sandboxd-test/debian');
    digests.add(digest);
    reference = `${registry.host}/sandboxd-test/debian:${DEBIAN_TAG}`;
    // The loopback registry is the operator's insecure registry; the loopback git server needs the opt-in.
    // No warm pool: every VM here starts from the built template, never from the built-in one the pool keeps.
    server = await startTestServer({ config: { templateInsecureRegistries: [registry.host], templateGitAllowPrivate: true, poolSize: 0 } });
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
  });

  after(async () => {
    try {
      await server?.close();
    } finally {
      await Promise.all([registry?.stop(), layout?.remove(), git?.stop()]);
      await removeCachedImages(server?.config.vm.cacheDir, digests);
    }
  });

  test('bad input is refused with 4xx and starts nothing', async () => {
    const post = (body: Record<string, unknown>) =>
      call(server, 'POST', '/v1/templates', { ...as(alice), json: { name: 'bad', oci_image: reference, ...body } });
    const refused: [Record<string, unknown>, number, RegExp?][] = [
      [{ oci_image: 'has a space' }, 422],
      [{ oci_image: '--output=/etc/passwd' }, 422],
      [{ oci_image: 'docker://example.com/x' }, 400, /without a scheme or transport/],
      [{ oci_image: `${registry.host}/Upper/Case:1` }, 400, /oci_image: invalid image reference/],
      [{ name: 'a/b' }, 422],
      [{ name: 'default' }, 409, /built-in/],
      [{ build_args: { git_clone_url: 'file:///etc' } }, 422],
      [{ build_args: { git_clone_url: 'ext::sh -c id' } }, 422],
      [{ build_args: { git_clone_url: 'https://user:token@example.com/r.git' } }, 400, /no credentials/],
      [{ build_args: { git_clone_url: git.url, git_clone_branch: '--upload-pack=touch /tmp/x' } }, 422],
      [{ build_args: { git_clone_url: git.url, git_clone_branch: 'a..b' } }, 400, /not a branch name/],
      [{ build_args: { git_clone_branch: 'main' } }, 400, /needs build_args.git_clone_url/],
      [{ build_args: { envs: { 'BAD-NAME': 'x' } } }, 400, /not a variable name/],
      [{ vcpu_count: 3 }, 422],
      [{ memory_mb: 64 }, 422],
    ];
    for (const [body, status, message] of refused) {
      const answer = await post(body);
      assert.equal(answer.status, status, `${JSON.stringify(body)}: ${answer.text}`);
      if (message) assert.match(answer.body.detail, message);
    }
    const listed = await call(server, 'GET', '/v1/templates', as(alice));
    assert.deepEqual(
      listed.body.map((t: { template_id: string }) => t.template_id),
      ['default'],
      'nothing was recorded',
    );
  });

  test('a build from the registry with a git clone and a post-build command ends ready; its log follows every step', async (t) => {
    const created = await call(server, 'POST', '/v1/templates', {
      ...as(alice),
      json: {
        name: 'debian-tpl',
        oci_image: reference,
        build_args: {
          git_clone_url: git.url,
          envs: { BUILD_SECRET },
          // Runs in the clone: proves the clone is there before the capture, and that envs reach the command.
          post_build_cmd:
            'printf %s "$BUILD_SECRET" | sha256sum | cut -d" " -f1 > /root/secret.sha && git log --oneline | wc -l > /root/commits && echo post-build ran in "$PWD"',
        },
        vcpu_count: 1,
        memory_mb: 512,
      },
    });
    assert.equal(created.status, 202, created.text);
    assert.equal(created.body.status, 'building');
    assert.equal(created.body.name, 'debian-tpl');
    assert.deepEqual(created.body.build_args.env_names, ['BUILD_SECRET']);
    templateId = created.body.template_id;
    assert.match(templateId, /^tpl_[a-z2-7]{16}$/);
    // The spec's alias, queued behind it: a tag the registry does not have.
    const alias = await call(server, 'POST', '/v1/snapshots', {
      ...as(alice),
      json: { name: 'missing-tag', oci_image: `${registry.host}/sandboxd-test/debian:no-such-tag` },
    });
    assert.equal(alias.status, 202, alias.text);
    missingTagId = alias.body.template_id;
    const again = await call(server, 'POST', '/v1/templates', { ...as(alice), json: { name: 'debian-tpl', oci_image: reference } });
    assert.equal(again.status, 409, 'the name is taken while it builds');
    const early = await call(server, 'POST', '/v1/vms', { ...as(alice), json: { template: 'debian-tpl', vcpu_count: 1 } });
    assert.equal(early.status, 409, early.text);
    assert.match(early.body.detail, /debian-tpl is building/);

    const { template, lines, ms } = await waitForBuild(templateId);
    t.diagnostic(`built in ${ms} ms; ${lines.filter((line) => /^\w+: [\d.]+ s$/.test(line)).join(', ')}`);
    assert.equal(template.status, 'ready', `${template.error}\n${lines.slice(-30).join('\n')}`);
    assert.equal(template.image_digest, digest, 'the digest pulled is the one pushed');
    assert.equal(template.error, null);
    assert.deepEqual(template.progress, { step: null, step_index: 9, step_count: 9 });
    assert.ok(template.disk_size_mb > 0);
    for (const step of ['resolve', 'boot', 'git_clone', 'post_build_cmd', 'snapshot'])
      assert.ok(
        lines.some((line) => line.startsWith('==> step') && line.endsWith(`: ${step}`)),
        `the log announces ${step}`,
      );
    assert.ok(
      lines.some((line) => line === 'post-build ran in /workspace/sample'),
      'the command ran in the clone',
    );
    const everything = JSON.stringify(template) + lines.join('\n');
    assert.ok(!everything.includes(BUILD_SECRET), 'the value of an env is in no record or log');
  });

  test('a tag the registry lacks (through POST /v1/snapshots) ends failed at resolve, the error and log saying why', async () => {
    const { template, lines } = await waitForBuild(missingTagId);
    assert.equal(template.status, 'failed');
    assert.equal(template.progress.step, 'resolve');
    assert.match(template.error, /^resolve: .*no such image/s);
    assert.ok(
      lines.some((line) => /build failed at resolve/.test(line)),
      lines.join('\n'),
    );
  });

  test('a post-build command that exits 3 ends the build failed at post_build_cmd with its output', async () => {
    const created = await call(server, 'POST', '/v1/templates', {
      ...as(alice),
      json: { name: 'exits-3', oci_image: reference, build_args: { post_build_cmd: 'echo about to fail >&2; exit 3' }, vcpu_count: 1, memory_mb: 512 },
    });
    assert.equal(created.status, 202, created.text);
    const { template, lines } = await waitForBuild(created.body.template_id);
    assert.equal(template.status, 'failed', lines.join('\n'));
    assert.equal(template.progress.step, 'post_build_cmd');
    assert.match(template.error, /post_build_cmd failed: exit code 3[\s\S]*about to fail/);
    assert.ok(lines.includes('about to fail'));
    assert.equal((await call(server, 'DELETE', `/v1/templates/${created.body.template_id}`, as(alice))).status, 204);
  });

  test("a VM starts from the template by name: the image's files, the clone in /workspace, what the command made", async () => {
    const started = await call(server, 'POST', '/v1/vms', {
      ...as(alice),
      json: { template: 'debian-tpl', vcpu_count: 1, memory_mb: 512, vm_lifetime_seconds: 900 },
    });
    assert.equal(started.status, 200, started.text);
    assert.equal(started.body.template_id, templateId);
    vmId = started.body.vm_id;
    sessionId = started.body.session_id;
    assert.equal(await bash(`cat ${ADDED_FILE}`), ADDED_TEXT, "the image's own layer");
    assert.equal(await bash('echo "$GREETING"'), 'hello from the image', "the image's Env");
    assert.equal(await bash('cat /workspace/sample/README.md'), README.trim(), 'the clone');
    assert.equal(await bash('git -C /workspace/sample log --oneline | wc -l'), '2', 'its history');
    assert.equal(await bash('git -C /workspace/sample remote get-url origin'), git.url, 'origin is the URL, not the copy the host made');
    assert.equal(await bash('cat /root/commits'), '2');
    assert.equal(await bash('cat /root/secret.sha'), createHash('sha256').update(BUILD_SECRET).digest('hex'), 'envs reached the command');
    assert.equal(await bash('test -e /var/tmp/sandboxd-git && echo left || echo removed'), 'removed', "the host's copy is not left in the image");
  });

  test('another user gets 404 on the template by id and by name', async () => {
    for (const [method, url] of [
      ['GET', `/v1/templates/${templateId}`],
      ['GET', `/v1/templates/${templateId}/logs`],
      ['DELETE', `/v1/templates/${templateId}`],
    ] as const) {
      assert.equal((await call(server, method, url, as(bob))).status, 404, `${method} ${url}`);
    }
    const listed = await call(server, 'GET', '/v1/templates', as(bob));
    assert.deepEqual(
      listed.body.map((t: { template_id: string }) => t.template_id),
      ['default'],
    );
    const vm = await call(server, 'POST', '/v1/vms', { ...as(bob), json: { template: 'debian-tpl', vcpu_count: 1 } });
    assert.equal(vm.status, 404, vm.text);
  });

  test('delete: 409 while a VM started from it runs, then 204; its files and record are gone; the events were recorded', async () => {
    const refused = await call(server, 'DELETE', `/v1/templates/${templateId}`, as(alice));
    assert.equal(refused.status, 409, refused.text);
    assert.match(refused.body.detail, new RegExp(vmId));
    assert.equal((await call(server, 'DELETE', `/v1/vms/${vmId}`, as(alice))).status, 200);
    const dir = join(server.config.vm.vmSnapshotDir, 'templates', templateId);
    assert.ok(existsSync(dir));
    assert.equal((await call(server, 'DELETE', `/v1/templates/${templateId}`, as(alice))).status, 204);
    assert.equal((await call(server, 'GET', `/v1/templates/${templateId}`, as(alice))).status, 404);
    assert.ok(!existsSync(dir), 'its files are removed');
    assert.equal((await call(server, 'DELETE', `/v1/templates/${missingTagId}`, as(alice))).status, 204);
    const events = (await listEventsAfter(server.services.database.db, 0, 10_000)).filter((event) => event.type.startsWith('template.'));
    const of = (id: string) => events.filter((event) => event.data.template_id === id).map((event) => event.type);
    assert.deepEqual(of(templateId), ['template.build.started', 'template.build.succeeded', 'template.deleted']);
    assert.deepEqual(of(missingTagId), ['template.build.started', 'template.build.failed', 'template.deleted']);
  });
});

/** Removes the guest images and pulled layouts this run's digests left in the shared cache (each run has its own). */
async function removeCachedImages(cacheDir: string | undefined, digests: Set<string>): Promise<void> {
  if (!cacheDir || digests.size === 0) return;
  const imagesRoot = join(imagesDir(cacheDir), 'oci-image');
  for (const hash of await readdir(imagesRoot).catch(() => [])) {
    const manifest = await readFile(join(imagesRoot, hash, 'manifest.json'), 'utf8').then(
      (text) => JSON.parse(text) as { digest?: string },
      () => ({}) as { digest?: string },
    );
    if (!manifest.digest || !digests.has(manifest.digest)) continue;
    await rm(join(imagesRoot, hash), { recursive: true, force: true });
    await rm(layerLockPath(cacheDir, 'oci-image', hash), { force: true });
  }
  for (const digest of digests) {
    const pulled = dirname(pullLayoutDir(cacheDir, digest));
    await rm(pulled, { recursive: true, force: true });
    await rm(layerLockPath(cacheDir, 'oci-pull', basename(pulled)), { force: true });
  }
}
