// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * `client.templates` against the real server, without a VM: a build whose registry the server refuses (a private
 * address) fails at its first step, so create, waitUntilReady (its log lines and its failure), list, get, logs
 * and delete all run for real, with the errors a caller meets. The successful build on real VMs is the server's
 * test/templates.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../server/test/helpers/test-server.ts';
import { NotFoundError, Sandboxd, SandboxdError, TemplateBuildFailedError } from '../src/index.ts';

describe('client.templates', () => {
  let server: TestServer;
  let client: Sandboxd;
  let other: Sandboxd;

  before(async () => {
    server = await startTestServer();
    client = new Sandboxd({ baseUrl: server.baseUrl, apiKey: (await server.createUserWithKey('gina')).apiKey, maxRetries: 0 });
    other = new Sandboxd({ baseUrl: server.baseUrl, apiKey: (await server.createUserWithKey('hank')).apiKey, maxRetries: 0 });
  });
  after(() => server?.close());

  test('create, wait (the failure with its step and log), list, get, logs, delete', async () => {
    const created = await client.templates.create({
      name: 'sdk-tpl',
      ociImage: '10.0.0.1:5000/team/app:1',
      gitCloneUrl: 'https://git.example.com/team/app.git',
      postBuildCmd: 'make',
      envs: { TOKEN: 'sdk-secret' },
    });
    assert.equal(created.status, 'building');
    assert.deepEqual(created.build_args, {
      git_clone_url: 'https://git.example.com/team/app.git',
      git_clone_branch: null,
      env_names: ['TOKEN'],
      post_build_cmd: 'make',
    });
    const lines: string[] = [];
    const failed = await client.templates.waitUntilReady(created.template_id, { onLine: (line) => lines.push(line) }).then(
      () => assert.fail('the build should fail'),
      (error: unknown) => error,
    );
    assert.ok(failed instanceof TemplateBuildFailedError, String(failed));
    assert.equal(failed.step, 'resolve');
    assert.match(failed.message, /10\.0\.0\.1 is a private address/);
    assert.ok(
      lines.some((line) => line.startsWith('build failed at resolve')),
      lines.join('\n'),
    );

    const listed = await client.templates.list();
    assert.deepEqual(
      listed.map((t) => [t.name, t.status]),
      [
        ['default', 'ready'],
        ['sdk-tpl', 'failed'],
      ],
    );
    assert.equal((await client.templates.get(created.template_id)).error, failed.message.replace(/^template sdk-tpl failed to build: /, ''));
    const page = await client.templates.logs(created.template_id, { after: 1 });
    assert.equal(page.lines.length, lines.length - 1, 'after skips the lines already read');
    assert.ok(!JSON.stringify(listed).includes('sdk-secret'));

    await assert.rejects(other.templates.get(created.template_id), NotFoundError);
    await assert.rejects(
      client.templates.create({ name: 'sdk-tpl', ociImage: 'example.com/a/b:1' }),
      (error: unknown) => error instanceof SandboxdError && error.status === 409,
    );
    await assert.rejects(
      client.templates.create({ name: 'bad-ref', ociImage: 'example.com/Upper/b:1' }),
      (error: unknown) => error instanceof SandboxdError && error.status === 400,
    );
    await client.templates.delete(created.template_id);
    await assert.rejects(client.templates.get(created.template_id), NotFoundError);
  });
});
