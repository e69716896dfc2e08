/**
 * H-2, M-1, M-5: the vault's secrets stay out of the guest's reach, go only where they are meant to go, and are
 * sealed under a key the database does not hold.
 *
 * One real server and one real VM of a vault session. api.test and other.test are the same HTTPS upstream in a
 * network namespace (fixtures/echo-upstream.mjs: a front end that answers any Host, and echoes what it is sent
 * the way real servers do: api.openai.com's "Invalid URL (GET /v1/…)", nginx's directory redirect to the Host it
 * was asked for, a reflected CORS origin, a gzip'd echo, a base64 echo of Authorization). Four secrets are bound
 * to api.test, one per injection point. Every case runs curl in the guest and looks at everything the guest
 * received, and at what the upstream saw (its request log).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import SQLite from 'better-sqlite3';
import { loadConfig } from '../../src/config/index.ts';
import { decodeClusterToken, encodeClusterToken, joinCluster } from '../../src/core/cluster/join.ts';
import { sealingContext } from '../../src/core/vault/vault-key.ts';
import { SecretBox, VAULT_KEY_INFO } from '../../src/core/secrets/secret-box.ts';
import { createServices } from '../../src/services.ts';
import { openDatabase } from '../../src/store/database.ts';
import { listEventsAfter } from '../../src/store/events-store.ts';
import { secretLeaks } from '../helpers/secret-leaks.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { ECHO_UPSTREAM, startVaultNetwork, type VaultNetwork } from '../helpers/vault-network.ts';

const skip =
  process.getuid?.() !== 0 ? 'needs root (nftables, cgroups, network namespaces)' : spawnSync('nft', ['--version']).status !== 0 ? 'needs nft' : false;

/** Values with characters that URL-encoding and base64 change, so that every encoded form differs from the raw one. */
const VALUES = {
  OPENAI_API_KEY: 'sk-proj-7Hq2/Xy+Za=vault-openai-0001',
  GITHUB_TOKEN: 'ghp_vaultTestToken0123456789abcdefGH',
  ANTHROPIC_API_KEY: 'sk-ant-api03-vault+test/key=0123456789',
  SERVICE_PASSWORD: 'basic pass/word+vault:42',
} as const;
type SecretName = keyof typeof VALUES;

/** One request the upstream saw (fixtures/echo-upstream.mjs `/__requests`). */
interface Seen {
  method: string;
  target: string;
  host: string;
  headers: string[];
}

function header(seen: Seen, name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < seen.headers.length; i += 2) if (seen.headers[i]!.toLowerCase() === name) values.push(seen.headers[i + 1]!);
  return values;
}

describe('the vault: H-2, M-1, M-5', { skip }, () => {
  let network: VaultNetwork;
  let server: TestServer;
  let apiKey: string;
  let vaultId: string;
  let sessionId: string;
  let placeholders: Record<SecretName, string>;

  async function guest(command: string): Promise<string> {
    const res = await call(server, 'POST', '/execute', { apiKey, json: { session_id: sessionId, language: 'bash', command, timeout: 120 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.exit_code, 0, `${res.body.stdout}\n${res.body.stderr}`);
    return String(res.body.stdout);
  }

  /** What the upstream saw for targets starting with `prefix`. */
  async function seen(prefix: string): Promise<Seen[]> {
    return ((await network.upstreams[0]!.requests()) as unknown as Seen[]).filter(
      (entry) => entry.target.startsWith(prefix) || entry.target.includes(`//other.test${prefix}`),
    );
  }

  /** The vault's flagged request-log entries. */
  async function flagged(): Promise<Array<{ secret_name: string; detail: string; path: string; status: number | null }>> {
    const page = await call(server, 'GET', `/v1/vaults/${vaultId}/request-logs?outcome=flagged&limit=500`, { apiKey });
    assert.equal(page.status, 200, page.text);
    return page.body.items;
  }

  function assertNoLeak(output: string, what: string): void {
    for (const [name, value] of Object.entries(VALUES)) assert.deepEqual(secretLeaks(output, value), [], `${what}: ${name} came back to the guest\n${output}`);
  }

  before(async () => {
    network = await startVaultNetwork([{ names: ['api.test', 'other.test'], script: ECHO_UPSTREAM }]);
    server = await startTestServer({ config: network.config });
    ({ apiKey } = await server.createUserWithKey('vault-security', 'pro'));
    const hosts = ['api.test'];
    const created = await call(server, 'POST', '/v1/vaults', {
      apiKey,
      json: {
        name: 'security',
        secrets: [
          { name: 'OPENAI_API_KEY', value: VALUES.OPENAI_API_KEY, allowed_hosts: hosts },
          { name: 'GITHUB_TOKEN', value: VALUES.GITHUB_TOKEN, allowed_hosts: hosts, inject: { type: 'header', name: 'Authorization', prefix: 'token ' } },
          { name: 'ANTHROPIC_API_KEY', value: VALUES.ANTHROPIC_API_KEY, allowed_hosts: hosts, inject: { type: 'header', name: 'x-api-key' } },
          { name: 'SERVICE_PASSWORD', value: VALUES.SERVICE_PASSWORD, allowed_hosts: hosts, inject: { type: 'basic' } },
        ],
      },
    });
    assert.equal(created.status, 201, created.text);
    vaultId = created.body.id;
    const session = await call(server, 'POST', '/v1/sessions/session', { apiKey, json: { vcpu_count: 1, vault_ids: [vaultId] } });
    assert.equal(session.status, 200, session.text);
    sessionId = session.body.session_id;
    const env = await guest('for n in OPENAI_API_KEY GITHUB_TOKEN ANTHROPIC_API_KEY SERVICE_PASSWORD; do printf "%s=%s\\n" "$n" "$(printenv $n)"; done');
    placeholders = Object.fromEntries(
      env
        .trim()
        .split('\n')
        .map((line) => line.split('=')),
    ) as Record<SecretName, string>;
    for (const placeholder of Object.values(placeholders)) assert.match(placeholder, /^sbxv_[a-z2-7]{26}$/);
  });

  after(async () => {
    await server?.close();
    await network?.stop();
  });

  test('H-2: a vaulted secret cannot be read back through the path, the query, Host, Origin or a reflecting upstream', async () => {
    // Each case: its name, then the status line, headers and body as curl received them (bodies decoded).
    const output = await guest(`
      c() { printf '\\n=== %s\\n' "$1"; shift; curl -sS -i -m 20 --compressed "$@" || true; }
      B="Authorization: Bearer $OPENAI_API_KEY"
      c path "https://api.test/v1/$OPENAI_API_KEY" -H "$B"
      c query "https://api.test/v1/models?key=$OPENAI_API_KEY&other=$ANTHROPIC_API_KEY" -H "$B"
      c host https://api.test/dir -H "Host: $OPENAI_API_KEY" -H "$B"
      c origin https://api.test/cors -H "Origin: https://$OPENAI_API_KEY.example" -H "$B"
      c echo https://api.test/echo -H "$B" -H "Referer: https://x.example/?k=$OPENAI_API_KEY" -H "Cookie: k=$OPENAI_API_KEY"
      c echo-token https://api.test/echo -H "Authorization: token $GITHUB_TOKEN"
      c echo-x-api-key https://api.test/echo -H "x-api-key: $ANTHROPIC_API_KEY"
      c gzip https://api.test/gzip-echo -H "$B"
      c b64-bearer https://api.test/b64-echo -H "$B"
      c b64-basic https://api.test/b64-echo -u "svc:$SERVICE_PASSWORD"
      c echo-basic https://api.test/echo -u "svc:$SERVICE_PASSWORD"
    `);
    assertNoLeak(output, 'the guest received');
    // The echoes did happen, and where a value was, the guest sees a mask of its length.
    assert.match(output, new RegExp(`Invalid URL \\(GET /v1/${placeholders.OPENAI_API_KEY}\\)`), 'the path went out with the placeholder');
    assert.match(output, /=== host\n+HTTP\/1\.1 421 /, 'a Host that is not api.test is refused');
    assert.match(output, new RegExp(`access-control-allow-origin: https://${placeholders.OPENAI_API_KEY}\\.example`, 'i'));
    assert.ok(output.includes(`Bearer ${'*'.repeat(VALUES.OPENAI_API_KEY.length)}`), output);
    assert.ok(output.includes(`token ${'*'.repeat(VALUES.GITHUB_TOKEN.length)}`), output);

    // The swap still works where it is configured: the upstream received each value at its injection point.
    const echoes = await seen('/echo');
    assert.ok(echoes.some((entry) => header(entry, 'authorization').includes(`Bearer ${VALUES.OPENAI_API_KEY}`)));
    assert.ok(echoes.some((entry) => header(entry, 'authorization').includes(`token ${VALUES.GITHUB_TOKEN}`)));
    assert.ok(echoes.some((entry) => header(entry, 'x-api-key').includes(VALUES.ANTHROPIC_API_KEY)));
    assert.ok(echoes.some((entry) => header(entry, 'authorization').includes(`Basic ${Buffer.from(`svc:${VALUES.SERVICE_PASSWORD}`).toString('base64')}`)));
    // …and nowhere else: not in the path, the query, Referer, Cookie or Origin.
    const all = (await network.upstreams[0]!.requests()) as unknown as Seen[];
    for (const entry of all) {
      const elsewhere = JSON.stringify({
        target: entry.target,
        host: entry.host,
        headers: entry.headers.filter((_, i, list) => !/^(authorization|x-api-key)$/i.test(list[i - (i % 2)]!)),
      });
      for (const value of Object.values(VALUES)) assert.ok(!elsewhere.includes(value), `${entry.target}: ${elsewhere}`);
    }
  });

  test('H-2: a secret is swapped only at its injection point', async () => {
    const basic = (user: string) => `Authorization: Basic $(printf '%s' "${user}" | base64 -w0)`;
    const codes = await guest(`
      c() { printf '%s ' "$1"; shift; curl -sS -o /dev/null -w '%{http_code}\\n' -m 20 "$@" || true; }
      c bearer https://api.test/inj/bearer -H "Authorization: Bearer $OPENAI_API_KEY"
      c token https://api.test/inj/token -H "Authorization: token $GITHUB_TOKEN"
      c x-api-key https://api.test/inj/x-api-key -H "X-Api-Key: $ANTHROPIC_API_KEY"
      c basic https://api.test/inj/basic -H "${basic('svc:$SERVICE_PASSWORD')}"
      c bearer-in-x-api-key https://api.test/inj/bearer-in-x-api-key -H "X-Api-Key: $OPENAI_API_KEY"
      c token-as-bearer https://api.test/inj/token-as-bearer -H "Authorization: Bearer $GITHUB_TOKEN"
      c bearer-in-basic https://api.test/inj/bearer-in-basic -H "${basic('me:$OPENAI_API_KEY')}"
      c basic-as-bearer https://api.test/inj/basic-as-bearer -H "Authorization: Bearer $SERVICE_PASSWORD"
      c x-api-key-in-query "https://api.test/inj/x-api-key-in-query?k=$ANTHROPIC_API_KEY"
      c bearer-twice https://api.test/inj/bearer-twice -H "Authorization: Bearer $OPENAI_API_KEY" -H "Authorization: Bearer $OPENAI_API_KEY"
    `);
    assert.deepEqual(
      codes
        .trim()
        .split('\n')
        .map((line) => line.split(' ')[1]),
      Array(10).fill('200'),
      codes,
    );
    const byCase = new Map((await seen('/inj/')).map((entry) => [entry.target.split('?')[0]!.slice('/inj/'.length), entry]));
    const got = (name: string, headerName: string) => header(byCase.get(name)!, headerName);
    // At their injection points: swapped.
    assert.deepEqual(got('bearer', 'authorization'), [`Bearer ${VALUES.OPENAI_API_KEY}`]);
    assert.deepEqual(got('token', 'authorization'), [`token ${VALUES.GITHUB_TOKEN}`]);
    assert.deepEqual(got('x-api-key', 'x-api-key'), [VALUES.ANTHROPIC_API_KEY]);
    assert.deepEqual(got('basic', 'authorization'), [`Basic ${Buffer.from(`svc:${VALUES.SERVICE_PASSWORD}`).toString('base64')}`]);
    // Anywhere else: the placeholder goes out as it is.
    assert.deepEqual(got('bearer-in-x-api-key', 'x-api-key'), [placeholders.OPENAI_API_KEY]);
    assert.deepEqual(got('token-as-bearer', 'authorization'), [`Bearer ${placeholders.GITHUB_TOKEN}`]);
    assert.deepEqual(got('bearer-in-basic', 'authorization'), [`Basic ${Buffer.from(`me:${placeholders.OPENAI_API_KEY}`).toString('base64')}`]);
    assert.deepEqual(got('basic-as-bearer', 'authorization'), [`Bearer ${placeholders.SERVICE_PASSWORD}`]);
    assert.equal(byCase.get('x-api-key-in-query')!.target, `/inj/x-api-key-in-query?k=${placeholders.ANTHROPIC_API_KEY}`);
    assert.deepEqual(
      got('bearer-twice', 'authorization'),
      [`Bearer ${placeholders.OPENAI_API_KEY}`, `Bearer ${placeholders.OPENAI_API_KEY}`],
      'a second Authorization: neither is swapped',
    );

    // Each misplaced use is flagged in the request log, saying where it was, and raises an event.
    const flags = (await flagged()).filter((entry) => entry.path?.startsWith('/inj/'));
    const flagOf = (casePath: string) => flags.find((entry) => entry.path === `/inj/${casePath}`);
    assert.match(flagOf('bearer-in-x-api-key')?.detail ?? '', /not at its injection point \(Authorization: Bearer\): in header X-Api-Key/);
    assert.match(flagOf('token-as-bearer')?.detail ?? '', /not at its injection point \(Authorization: token\): in header Authorization/);
    assert.match(flagOf('bearer-in-basic')?.detail ?? '', /Basic credentials/);
    assert.match(flagOf('basic-as-bearer')?.detail ?? '', /\(Authorization: Basic\)/);
    assert.match(flagOf('x-api-key-in-query')?.detail ?? '', /\(x-api-key\): in the query/);
    assert.match(flagOf('bearer-twice')?.detail ?? '', /sent 2 times/);
    for (const ok of ['bearer', 'token', 'x-api-key', 'basic']) assert.equal(flagOf(ok), undefined, ok);
    const events = (await listEventsAfter(server.services.database.db, 0, 10_000)).filter(
      (event) => event.type === 'vault.placeholder_flagged' && event.data.session_id === sessionId,
    );
    assert.ok(events.length > 0 && events.every((event) => !JSON.stringify(event.data).includes('sk-')), 'flag events, without values');
  });

  test('M-1: a request whose Host or absolute-form target is not the bound name never carries the secret', async () => {
    const codes = await guest(`
      c() { printf '%s ' "$1"; shift; curl -sS -o /tmp/m1-body -w '%{http_code}\\n' -m 20 "$@" || true; }
      B="Authorization: Bearer $OPENAI_API_KEY"
      c host https://api.test/m1/host -H "Host: other.test" -H "$B"
      c host-with-port https://api.test/m1/host-with-port -H "Host: other.test:443" -H "$B"
      c absolute https://api.test/m1/ignored --request-target https://other.test/m1/absolute -H "$B"
      c bound https://api.test/m1/bound -H "$B"
      cat /tmp/m1-body >/dev/null
    `);
    assert.deepEqual(
      codes
        .trim()
        .split('\n')
        .map((line) => line.split(' ')[1]),
      ['421', '421', '421', '200'],
      codes,
    );
    // The upstream (which would route on Host: other.test is another tenant of it) got only the bound request.
    const requests = (await network.upstreams[0]!.requests()) as unknown as Seen[];
    assert.deepEqual(
      requests.filter((entry) => entry.target.includes('/m1/')).map((entry) => [entry.target, entry.host]),
      [['/m1/bound', 'api.test']],
    );
    assert.ok(!requests.some((entry) => /other\.test/.test(entry.host) || entry.target.includes('other.test')), 'other.test was never asked for anything');
    assert.ok(
      requests.every((entry) => entry.host === 'api.test'),
      'the upstream always gets Host = the SNI name',
    );
    const refusals = (await flagged()).filter((entry) => /421 Misdirected Request/.test(entry.detail));
    assert.ok(refusals.length >= 3 && refusals.every((entry) => entry.status === 421 && entry.secret_name === 'OPENAI_API_KEY'), JSON.stringify(refusals));
  });

  test('M-5: the vault key is kept outside the database', async () => {
    // This server's fresh data directory: the key is a 0600 file beside the database, not in it.
    const keyFile = path.join(server.dataDir, 'vault.key');
    assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
    const key = fs.readFileSync(keyFile, 'utf8').trim();
    assert.equal(server.services.vaultBox.source, 'generated');
    // What the server logs at start (main.ts): which key source it uses.
    assert.equal(server.services.vaultBox.describe(), `vault key: ${keyFile} (generated now, mode 0600; back it up, apart from the database)`);
    // Whoever holds the database file has the auth secret and the key's fingerprint, and opens no secret with them.
    const file = new SQLite(path.join(server.dataDir, 'sandboxd.db'), { readonly: true });
    try {
      const settings = Object.fromEntries(
        (file.prepare('select name, value from settings').all() as { name: string; value: string }[]).map((row) => [row.name, row.value]),
      );
      const secret = file.prepare("select vault_id, name, sealed_value from vault_secrets where name = 'OPENAI_API_KEY'").get() as {
        vault_id: string;
        name: string;
        sealed_value: string;
      };
      const dump = JSON.stringify(file.prepare('select * from settings').all()) + JSON.stringify(file.prepare('select * from vault_secrets').all());
      assert.ok(!dump.includes(key), 'the key is not in the database');
      const context = sealingContext(secret.vault_id, secret.name);
      for (const candidate of [settings['auth.token_secret']!, settings['vault.key_id']!, settings['cluster.internal_secret']!].filter(Boolean)) {
        assert.throws(
          () => new SecretBox(candidate, VAULT_KEY_INFO).open(secret.sealed_value, context),
          'a secret of the database does not open a sealed value',
        );
      }
      assert.equal(new SecretBox(key, VAULT_KEY_INFO).open(secret.sealed_value, context), VALUES.OPENAI_API_KEY, 'the file key does');
      const ca = JSON.parse(settings['vault.ca']!) as { sealed_key: string };
      assert.throws(() => new SecretBox(settings['auth.token_secret']!, VAULT_KEY_INFO).open(ca.sealed_key, 'vault.ca'), 'nor the CA key');
    } finally {
      file.close();
    }

    // An old-format deployment: secrets and the CA key sealed under the key derived from the auth secret in the store.
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-vault-old-'));
    try {
      const config = loadConfig({}, { dataDir, logLevel: 'silent' });
      let database = await openDatabase({ dataDir, databaseUrl: null });
      const authSecret = 'an-old-deployment-auth-secret-of-48-characters-x';
      const legacy = new SecretBox(authSecret, VAULT_KEY_INFO);
      const user = await database.db
        .insertInto('users')
        .values({ username: 'old', password_hash: 'x', plan: 'free', is_admin: 0, created_at: new Date().toISOString() } as never)
        .returning('id')
        .executeTakeFirstOrThrow();
      const at = new Date().toISOString();
      await database.db
        .insertInto('settings')
        .values([
          { name: 'auth.token_secret', value: authSecret },
          { name: 'vault.ca', value: JSON.stringify({ cert_pem: 'PEM', sealed_key: legacy.seal('the CA key', 'vault.ca') }) },
        ])
        .execute();
      await database.db
        .insertInto('vaults')
        .values({ id: 'vlt_old', user_id: user.id, name: 'old', description: null, created_at: at, updated_at: at })
        .execute();
      await database.db
        .insertInto('vault_secrets')
        .values({
          vault_id: 'vlt_old',
          name: 'OLD_KEY',
          sealed_value: legacy.seal('the old value', sealingContext('vlt_old', 'OLD_KEY')),
          allowed_hosts: '["api.test"]',
          inject: '{"type":"bearer"}',
          created_at: at,
          updated_at: at,
        })
        .execute();

      // The re-seal is one transaction: a store it cannot finish (a damaged CA row) is left exactly as it was.
      await database.db.updateTable('settings').set({ value: 'not json' }).where('name', '=', 'vault.ca').execute();
      await assert.rejects(createServices(config, database));
      const untouched = await database.db.selectFrom('vault_secrets').select('sealed_value').executeTakeFirstOrThrow();
      assert.equal(legacy.open(untouched.sealed_value, sealingContext('vlt_old', 'OLD_KEY')), 'the old value');
      assert.equal(await database.db.selectFrom('settings').select('value').where('name', '=', 'vault.key_id').executeTakeFirst(), undefined);
      await database.db
        .updateTable('settings')
        .set({ value: JSON.stringify({ cert_pem: 'PEM', sealed_key: legacy.seal('the CA key', 'vault.ca') }) })
        .where('name', '=', 'vault.ca')
        .execute();
      fs.rmSync(path.join(dataDir, 'vault.key'), { force: true });

      // The first start re-seals everything under the new file key, once.
      const services = await createServices(config, database);
      assert.equal(services.vaultBox.resealed.resealed, 2, 'the secret and the CA key');
      const row = await database.db.selectFrom('vault_secrets').select('sealed_value').executeTakeFirstOrThrow();
      assert.throws(() => legacy.open(row.sealed_value, sealingContext('vlt_old', 'OLD_KEY')), 'the old default key opens nothing any more');
      assert.equal(services.vaultBox.open(row.sealed_value, sealingContext('vlt_old', 'OLD_KEY')), 'the old value');
      const caRow = JSON.parse((await database.db.selectFrom('settings').select('value').where('name', '=', 'vault.ca').executeTakeFirstOrThrow()).value) as {
        sealed_key: string;
      };
      assert.equal(services.vaultBox.open(caRow.sealed_key, 'vault.ca'), 'the CA key');
      assert.equal(fs.statSync(path.join(dataDir, 'vault.key')).mode & 0o777, 0o600);
      await database.close();

      // A restart: the same key, nothing re-sealed, the secret still opens.
      database = await openDatabase({ dataDir, databaseUrl: null });
      const again = await createServices(config, database);
      assert.deepEqual([again.vaultBox.source, again.vaultBox.resealed.resealed], ['file', 0]);
      assert.equal(again.vaultBox.open(row.sealed_value, sealingContext('vlt_old', 'OLD_KEY')), 'the old value');

      // A node of the same deployment without the key, or with another one, refuses vault use with a clear error.
      const principal = { userId: Number(user.id), isAdmin: false } as never;
      const keyless = await createServices(
        loadConfig({}, { dataDir: fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-vault-node-')), logLevel: 'silent' }),
        database,
      );
      assert.equal(keyless.vaultBox.available, false);
      await assert.rejects(
        keyless.vaults.create(principal, { name: 'n', secrets: [{ name: 'K', value: 'v', allowedHosts: ['api.test'] }] }),
        (error: any) => error.code === 'VAULT_KEY_UNAVAILABLE' && /SANDBOXD_VAULT_KEY/.test(error.message),
      );
      const wrong = await createServices(loadConfig({}, { dataDir, vaultKey: 'another-key-that-is-long-enough-0123456789', logLevel: 'silent' }), database);
      assert.match(wrong.vaultBox.problem ?? '', /fingerprint differs/);

      // The join token carries the key to a new node (its cluster.json, read under the environment).
      const token = decodeClusterToken(
        encodeClusterToken({
          databaseUrl: 'postgres://db/sandboxd',
          clusterSecret: 'c'.repeat(48),
          vaultKey: fs.readFileSync(path.join(dataDir, 'vault.key'), 'utf8').trim(),
        }),
      );
      const joinedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-vault-join-'));
      await joinCluster(database, token, { dataDir: joinedDir });
      const joined = await createServices(loadConfig({}, { dataDir: joinedDir, logLevel: 'silent', databaseUrl: null }), database);
      assert.deepEqual(
        [joined.vaultBox.source, joined.vaultBox.open(row.sealed_value, sealingContext('vlt_old', 'OLD_KEY'))],
        ['SANDBOXD_VAULT_KEY', 'the old value'],
      );
      await database.close();
      fs.rmSync(joinedDir, { recursive: true, force: true });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
