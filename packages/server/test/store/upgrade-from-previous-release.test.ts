// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * An upgrade keeps every row: this release opens a store the previous release (v0.2.2) wrote and finds every
 * row, key, webhook secret, vault secret, session and template in it. The fixture (test/fixtures/upgrade/v0.2.2/,
 * made by make-fixture.mjs from that release's own server, API and admin command) is copied, never changed.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { sealingContext } from '../../src/core/vault/vault-key.ts';
import { openDatabase } from '../../src/store/database.ts';
import { migrationProvider } from '../../src/store/migrations/index.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { waitUntil } from '../helpers/wait.ts';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/upgrade/v0.2.2');
const expected = JSON.parse(fs.readFileSync(path.join(FIXTURE, 'expected.json'), 'utf8'));

/** A data directory holding a copy of the fixture (the server writes to its store). */
function copyOfFixture(): string {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-upgrade-'));
  fs.copyFileSync(path.join(FIXTURE, 'sandboxd.db'), path.join(dataDir, 'sandboxd.db'));
  fs.copyFileSync(path.join(FIXTURE, 'vault.key'), path.join(dataDir, 'vault.key'));
  fs.chmodSync(path.join(dataDir, 'vault.key'), 0o600);
  return dataDir;
}

describe(`upgrade from ${expected.release}: this release on the previous release's store`, () => {
  test('the store opens, every migration of this release is applied, and every table keeps its rows', async () => {
    const dataDir = copyOfFixture();
    try {
      const database = await openDatabase({ dataDir, databaseUrl: null });
      try {
        const applied = (await sql<{ name: string }>`select name from schema_migrations`.execute(database.db)).rows.map((r) => r.name);
        const known = Object.keys(await migrationProvider('sqlite').getMigrations());
        assert.deepEqual([...new Set(applied)].sort(), known.sort(), 'the applied migrations are exactly the ones this release knows');
        for (const name of expected.migrations) assert.ok(applied.includes(name), `${name} is still recorded`);
        const tables = (await sql<{ name: string }>`select name from sqlite_master where type = 'table'`.execute(database.db)).rows.map((r) => r.name);
        const counts = expected.row_counts as Record<string, number>;
        assert.ok(Object.keys(counts).length >= 30, 'the fixture covers the tables');
        for (const [table, count] of Object.entries(counts)) {
          assert.ok(tables.includes(table), `table ${table} still exists`);
          const { rows } = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(database.db);
          assert.ok(rows[0]!.n >= count, `${table}: ${rows[0]!.n} rows, the previous release left ${count}`);
        }
        assert.ok(
          counts.executions! > 0 && counts.webhook_endpoints! > 0 && counts.vault_secrets! > 0 && counts.templates! > 0,
          'the fixture holds the rows the test checks',
        );
      } finally {
        await database.close();
      }
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  describe('the app on that store', () => {
    let server: TestServer;
    let receiver: Receiver;
    const dataDir = copyOfFixture();
    const key = (username: string) => expected.api_keys.find((k: { username: string }) => k.username === username).full_key as string;

    before(async () => {
      receiver = await startReceiver();
      server = await startTestServer({
        dataDir,
        config: { webhookAllowPrivate: true, webhookRetryScheduleMs: [200], webhookMaxAttempts: 2, webhookTimeoutMs: 2000 },
      });
    });
    after(async () => {
      await server?.close();
      await receiver?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (server) fs.rmSync(server.config.vm.vmSnapshotDir, { recursive: true, force: true });
    });

    test('every API key the previous release made still authenticates, and every password signs in', async () => {
      for (const { username, full_key } of expected.api_keys) {
        const listed = await call(server, 'GET', '/v1/api-keys/', { apiKey: full_key });
        assert.equal(listed.status, 200, `${username}'s key: ${listed.text}`);
      }
      for (const { username, password } of expected.users) {
        const token = await call(server, 'POST', '/v1/auth/token', { form: { username, password } });
        assert.equal(token.status, 200, `${username}: ${token.text}`);
        assert.ok(token.body.access_token);
      }
      const wrong = await call(server, 'GET', '/v1/api-keys/', { apiKey: `${key('alice').slice(0, -4)}xxxx` });
      assert.equal(wrong.status, 401, 'a key that was never made does not');
    });

    test('sessions keep their metadata; templates, volumes, SSH keys, shares and vaults are listed', async () => {
      const session = await call(server, 'GET', `/v1/sessions/session/${expected.session.id}`, { apiKey: key('alice') });
      assert.equal(session.status, 200, session.text);
      assert.deepEqual(session.body.metadata, expected.session.metadata);
      for (const id of expected.sessions_of_bob) assert.equal((await call(server, 'GET', `/v1/sessions/session/${id}`, { apiKey: key('bob') })).status, 200);
      const templates = await call(server, 'GET', '/v1/templates', { apiKey: key('alice') });
      assert.equal(templates.status, 200);
      assert.ok(
        templates.body.some((t: { name: string }) => t.name === expected.template.name),
        `${expected.template.name} is listed: ${templates.text}`,
      );
      const volumes = await call(server, 'GET', '/v1/volumes', { apiKey: key('alice') });
      assert.ok(
        volumes.body.some((v: { name: string }) => v.name === expected.volume.name),
        `volumes: ${volumes.text}`,
      );
      const sshKeys = await call(server, 'GET', '/v1/ssh-keys', { apiKey: key('alice') });
      assert.ok(
        sshKeys.body.some((k: { public_key: string }) => k.public_key === expected.ssh_key.public_key.split(' ').slice(0, 2).join(' ')),
        `SSH keys: ${sshKeys.text}`,
      );
      const shares = await call(server, 'GET', '/v1/shares', { apiKey: key('alice') });
      assert.ok(
        shares.body.shares.some((s: { session_id: string; port: number }) => s.session_id === expected.share.session_id && s.port === expected.share.port),
        `shares: ${shares.text}`,
      );
      const vault = await call(server, 'GET', `/v1/vaults/${expected.vault.id}`, { apiKey: key('alice') });
      assert.equal(vault.status, 200, vault.text);
      assert.ok(JSON.stringify(vault.body.secrets).includes(expected.vault.secret_name), vault.text);
      if (expected.custom_domain) {
        const domains = await call(server, 'GET', '/v1/custom-domains', { apiKey: key('alice') });
        assert.ok(
          domains.body.custom_domains.some((d: { domain: string }) => d.domain === expected.custom_domain.domain),
          `custom domains: ${domains.text}`,
        );
      }
      const executions = await call(server, 'GET', '/v1/executions/', { apiKey: key('alice') });
      assert.equal(executions.status, 200);
      if (expected.execution) assert.ok(JSON.stringify(executions.body).includes(expected.execution.session_id), 'the execution is listed');
    });

    test("the webhook's signing secret still signs: a delivery verifies with the secret the previous release gave", async () => {
      const { id, secret } = expected.webhook;
      const moved = await call(server, 'PATCH', `/v1/webhooks/endpoints/${id}`, { apiKey: key('alice'), json: { url: receiver.url } });
      assert.equal(moved.status, 200, moved.text);
      const sent = await call(server, 'POST', `/v1/webhooks/endpoints/${id}/test`, { apiKey: key('alice') });
      assert.equal(sent.body?.status, 'succeeded', sent.text);
      await waitUntil('the test delivery', async () => receiver.requests.length > 0, 5000);
      const request = receiver.requests.at(-1)!;
      new Webhook(secret).verify(request.body, request.headers as Record<string, string>);
    });

    test('the vault secret and the browser credential still open with the kept vault key and the stored auth secret', async () => {
      const { services } = server;
      assert.ok(services.vaultBox.available, services.vaultBox.describe());
      const row = await services.database.db
        .selectFrom('vault_secrets')
        .selectAll()
        .where('vault_id', '=', expected.vault.id)
        .where('name', '=', expected.vault.secret_name)
        .executeTakeFirstOrThrow();
      assert.equal(services.vaultBox.open(row.sealed_value, sealingContext(row.vault_id, row.name)), expected.vault.secret_value);
      if (expected.browser_credential) {
        const credential = await services.database.db
          .selectFrom('browser_credentials')
          .selectAll()
          .where('name', '=', expected.browser_credential.name)
          .executeTakeFirstOrThrow();
        // Sealed as core/browser/credentials.ts seals it (its associated data binds it to its row).
        const opened = services.secretBox.open(credential.secret_sealed, `browser-credential:${credential.user_id}:${credential.id}`);
        assert.equal(opened, expected.browser_credential.password);
      }
    });
  });
});
