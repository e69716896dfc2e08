/**
 * Access matrix, generated from the served OpenAPI document: for every operation that takes an id (in its
 * path, query or body), a second, non-admin user sending the first user's id gets 404 (the spec's 403 on
 * /kill), and the answer holds none of the first user's data. The first user's resources are real: one
 * session with a running VM, an execution, a file, a terminal, a background process, a share, a custom domain, a webhook endpoint
 * and a delivery, API keys, a snapshot, a volume, a private network, a template (whose build failed), a browser session on a page of
 * the first user's, a render's usage record and stored screenshot (written as a render writes them) and a stored browser credential. An id the
 * matrix has no fixture for fails the test, so a new operation must be added here.
 * Needs the VM engine (one VM, and the browser's).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import ssh2 from 'ssh2';
import WebSocket from 'ws';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { createObjectStore } from '../../src/storage/index.ts';
import { insertBrowserUsage } from '../../src/store/browser-store.ts';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';
import { VIOLATION_STATUS } from '../helpers/openapi-conformance.ts';
import {
  operationsOf,
  parametersOf,
  requestBodyOf,
  urlOf,
  validValue,
  type OpenApiDocument,
  type Operation,
  type Schema,
} from '../helpers/openapi-operations.ts';

/** Inputs that are ids of something a user owns. */
const ID_NAME = /(^|_)id$/;

/** Ids that name nothing a user owns, with the reason. */
const NOT_OWNED: Record<string, string> = {
  last_event_id: "a position in the caller's own event stream, not a resource",
  worker_id: "worker nodes belong to the operator; these are the spec's unauthenticated local control operations",
  client_id: "the OAuth2 password flow's client identifier, which sandboxd accepts and ignores",
};

/**
 * Body ids that name another target than the ids sent with them, so they cannot go in the same request (the
 * operation answers 422 to the combination), with where another user's id is checked instead.
 */
const OTHER_TARGET: Record<string, Record<string, string>> = {
  'POST /v1/custom-domains': {
    app_id: "an app instead of a share or port: another user's app_id is a 404 in test/apps/app-deploy.test.ts (a real deployed app)",
  },
};

/** Marks planted in the first user's resources, to look for in the second user's answers. */
const MARK = {
  metadata: 'alice-metadata-7f3a',
  env: 'alice-env-value-91c2',
  output: 'alice-output-5e8d',
  file: 'alice-file-content-c4b1',
  page: 'alice-page-text-2d9e',
  login: 'alice-login-name-6b0f',
  password: 'alice-password-8c3a',
};

/**
 * Alice's browser page: a field each interaction can act on at once (so her own requests in the controls are
 * answered quickly), and a password field for fill-credential.
 */
const BROWSER_PAGE = `data:text/html,<title>${MARK.page}</title><p>${MARK.page}</p><input id="q" value="${MARK.page}"><input type="password" id="pw">`;

/**
 * Body fields an operation needs although the schema marks them optional (a rule across fields): scroll needs a
 * target.
 */
const ALSO_SENT: Record<string, string[]> = { '/v1/browser/interactions/scroll': ['y'] };

interface Sent {
  status: number;
  text: string;
  /** Everything the request itself carried, so an echo of the caller's own input is not counted as a leak. */
  request: string;
}

describe("access matrix: a second user with the first user's ids", () => {
  let server: TestServer;
  let receiver: Receiver;
  let doc: OpenApiDocument;
  let alice: { userId: number; apiKey: string };
  let bob: { userId: number; apiKey: string };
  const ids: Record<string, string> = {};
  const secrets: string[] = [];

  before(async () => {
    receiver = await startReceiver();
    server = await startTestServer({ config: { webhookAllowPrivate: true } });
    alice = await server.createUserWithKey('alice', 'pro');
    bob = await server.createUserWithKey('bob', 'pro');
    doc = (await call(server, 'GET', '/openapi.json')).body;
    const as = { apiKey: alice.apiKey };

    const session = await call(server, 'POST', '/v1/sessions/session', {
      ...as,
      json: { vm_lifetime_seconds: 1800, vcpu_count: 1, metadata: { owner: MARK.metadata }, env: { SECRET_ENV: MARK.env } },
    });
    ids.session_id = session.body.session_id;
    const run = await call(server, 'POST', '/execute', { ...as, json: { session_id: ids.session_id, code: `print("${MARK.output}")`, timeout: 180 } });
    assert.equal(run.status, 200, run.text);
    ids.vm_id = run.body.vm_id;
    ids.execution_id = String(run.body.execution_id);
    const form = new FormData();
    form.append('session_id', ids.session_id!);
    form.append('remote_path', '/tmp/alice.txt');
    form.append('file', new Blob([MARK.file]), 'alice.txt');
    assert.equal((await fetch(`${server.baseUrl}/upload`, { method: 'POST', headers: { 'x-api-key': alice.apiKey }, body: form })).status, 200);
    const pty = await call(server, 'POST', `/v1/sessions/${ids.session_id}/pty/sessions`, { ...as, json: { command: 'sleep 1800' } });
    assert.equal(pty.status, 200, pty.text);
    ids.pty_id = pty.body.pty_id;
    // A background process whose output holds a mark (stdin open, so the stdin operation has something to write to).
    const process = await call(server, 'POST', `/v1/sessions/${ids.session_id}/processes`, {
      ...as,
      json: { command: `echo ${MARK.output}; sleep 1800`, stdin: true },
    });
    assert.equal(process.status, 201, process.text);
    ids.process_id = process.body.process_id;
    const context = await call(server, 'POST', `/v1/sessions/${ids.session_id}/contexts`, { ...as, json: { cwd: '/tmp' } });
    assert.equal(context.status, 201, context.text);
    ids.context_id = context.body.id;
    const share = await call(server, 'POST', '/v1/shares', { ...as, json: { session_id: ids.session_id, port: 8000, is_public: false } });
    ids.share_id = share.body.share_id;
    const domain = await call(server, 'POST', '/v1/custom-domains', { ...as, json: { domain: 'alice-app.example.com', share_id: ids.share_id } });
    assert.equal(domain.status, 201, domain.text);
    ids.domain_id = domain.body.id;
    const endpoint = await call(server, 'POST', '/v1/webhooks/endpoints', {
      ...as,
      json: { url: `${receiver.url}/alice-hook`, event_patterns: ['webhook.*'] },
    });
    assert.equal(endpoint.status, 200, endpoint.text);
    ids.endpoint_id = endpoint.body.id;
    assert.equal((await call(server, 'POST', `/v1/webhooks/endpoints/${ids.endpoint_id}/test`, as)).status, 200);
    ids.delivery_id = (await call(server, 'GET', `/v1/webhooks/deliveries?endpoint_id=${ids.endpoint_id}`, as)).body.items[0].id;
    const snapshot = await call(server, 'POST', `/v1/vms/${ids.vm_id}/snapshot`, {
      ...as,
      json: { name: 'alice-snapshot', metadata: { owner: MARK.metadata } },
    });
    assert.equal(snapshot.status, 200, snapshot.text);
    ids.snapshot_id = snapshot.body.snapshot_id;
    const volume = await call(server, 'POST', '/v1/volumes', { ...as, json: { name: 'alice-volume', size_mb: 16 } });
    assert.equal(volume.status, 201, volume.text);
    ids.volume_id = volume.body.volume_id;
    const network = await call(server, 'POST', '/v1/networks', { ...as, json: { name: 'alice-network' } });
    assert.equal(network.status, 201, network.text);
    ids.network_id = network.body.network_id;
    // A real template record with a log, without a registry: a registry on a private address is refused at the
    // build's first step (SANDBOXD_TEMPLATE_REGISTRY_ALLOW_PRIVATE is off), so the build fails at once.
    const template = await call(server, 'POST', '/v1/templates', {
      ...as,
      json: { name: 'alice-template', oci_image: '127.0.0.1:9/alice/image:1', build_args: { envs: { TOKEN: MARK.env } } },
    });
    assert.equal(template.status, 202, template.text);
    ids.template_id = template.body.template_id;
    // A key of alice's to be named by id (not the one the test signs in with: a control may delete it).
    const spare = await call(server, 'POST', '/v1/api-keys/', { ...as, json: { description: 'spare key of alice' } });
    ids.api_key_id = String(spare.body.id);
    // ssh2 writes about one ed25519 key in 250 malformed (a leading zero byte dropped): take one it reads back.
    let publicKey = ssh2.utils.generateKeyPairSync('ed25519').public;
    while (ssh2.utils.parseKey(publicKey) instanceof Error) publicKey = ssh2.utils.generateKeyPairSync('ed25519').public;
    const sshKey = await call(server, 'POST', '/v1/ssh-keys', { ...as, json: { public_key: publicKey, name: 'alice ssh key' } });
    assert.equal(sshKey.status, 201, sshKey.text);
    ids.key_id = String(sshKey.body.id);
    ids.user_id = String(alice.userId);
    const vault = await call(server, 'POST', '/v1/vaults', {
      ...as,
      json: { name: 'alice-vault', secrets: [{ name: 'ALICE_TOKEN', value: MARK.output, allowed_hosts: ['alice.example.com'] }] },
    });
    assert.equal(vault.status, 201, vault.text);
    ids.vault_id = vault.body.id;
    // A browser session on a page of alice's, a render (a usage record with a stored screenshot), a credential.
    const browser = await call(server, 'POST', '/v1/browser/sessions/', { ...as, json: {} });
    assert.equal(browser.status, 200, browser.text);
    ids.browser_session_id = browser.body.session_id;
    const navigated = await call(server, 'POST', '/v1/browser/interactions/navigate', {
      ...as,
      json: { session_id: ids.browser_session_id, url: BROWSER_PAGE },
    });
    assert.equal(navigated.status, 200, navigated.text);
    // A render's usage record and stored screenshot, written where and as a render writes them: what is checked
    // here is who may read them, and a render is a browser VM of its own (~20 s of both cores under TCG; renders
    // themselves are tested in browser/browser.test.ts and by the clients' tests).
    const screenshotKey = `browser/screenshots/${alice.userId}/access-matrix.png`;
    await createObjectStore(server.config.objects).put(screenshotKey, Buffer.from(`<h1>${MARK.page}</h1>`), { contentType: 'image/png' });
    const rendered = await insertBrowserUsage(server.services.database.db, {
      user_id: alice.userId,
      kind: 'render',
      session_id: null,
      url: 'about:blank (html)',
      status: 'ok',
      error: null,
      pages: 1,
      screenshots: 1,
      duration_ms: 1,
      screenshot_key: screenshotKey,
      screenshot_format: 'png',
      screenshot_bytes: MARK.page.length + 9,
      created_at: new Date().toISOString(),
    });
    ids.usage_id = String(rendered);
    const credential = await call(server, 'POST', '/v1/browser/credentials', {
      ...as,
      json: { name: 'alice-credential', username: MARK.login, password: MARK.password, allowed_hosts: ['alice.example.com'] },
    });
    assert.equal(credential.status, 201, credential.text);
    ids.credential_id = credential.body.credential_id;
    // A desktop session (computer use) with its VM running and a recording saved from it.
    const desktop = await call(server, 'POST', '/v1/sessions/session', {
      ...as,
      json: { template: 'desktop', vm_lifetime_seconds: 1800, metadata: { owner: MARK.metadata } },
    });
    assert.equal(desktop.status, 200, desktop.text);
    ids.desktop_session_id = desktop.body.session_id;
    const recording = await call(server, 'POST', `/v1/computeruse/${ids.desktop_session_id}/recording/start`, { ...as, json: { framerate: 2 } });
    assert.equal(recording.status, 200, recording.text);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const stopped = await call(server, 'POST', `/v1/computeruse/${ids.desktop_session_id}/recording/stop`, as);
    assert.equal(stopped.status, 200, stopped.text);
    ids.recording_id = stopped.body.id;
    await server.services.sandbox.computerUse.settled();

    secrets.push(
      ...Object.entries(ids)
        .filter(([name]) => !['execution_id', 'api_key_id', 'usage_id', 'key_id', 'user_id'].includes(name))
        .map(([, value]) => value),
      endpoint.body.secret,
      domain.body.verification.value,
      'alice-app.example.com',
      'alice-snapshot',
      'alice-volume',
      'alice-template',
      'alice-credential',
      'alice-vault',
      'ALICE_TOKEN',
      'alice.example.com',
      '127.0.0.1:9/alice/image:1',
      alice.apiKey,
      spare.body.full_key,
      spare.body.key_prefix,
      `${receiver.url}/alice-hook`,
      ...Object.values(MARK),
    );
  });
  after(async () => {
    await server?.close();
    await receiver?.close();
  });

  /** The first user's value for an id input of an operation, or undefined when the matrix has none. */
  const fixtureFor = (name: string, operation: Operation): string | undefined => {
    const browser = operation.path.startsWith('/v1/browser/');
    if (name === 'session_id' && browser) return ids.browser_session_id;
    const desktop = operation.path.startsWith('/v1/computeruse/') || operation.path.includes('/recordings');
    if (name === 'session_id' && desktop) return ids.desktop_session_id;
    // The computer-use API's own path behind the proxy: one that exists (other methods answer 405 there).
    if (name === '*' && operation.path.startsWith('/v1/computeruse/')) return 'health';
    // A vault secret's path names it by its environment variable name.
    if (name === 'name' && operation.path.startsWith('/v1/vaults/')) return 'ALICE_TOKEN';
    if (name === 'item_id') {
      if (operation.path.startsWith('/v1/api-keys/')) return ids.api_key_id;
      if (operation.path.startsWith('/v1/executions/')) return ids.execution_id;
      return undefined;
    }
    return ids[name];
  };

  /** A value for an input that is not an id: one that passes validation, the same every time. */
  const sample = (name: string, schema: Schema, operation: Operation): unknown => {
    const fixed = (value: unknown) => () => value;
    if (operation.path.startsWith('/v1/browser/')) {
      // Values alice's page answers at once: a real field, its own URL, a condition that holds.
      const browserValue: Record<string, unknown> = { selector: '#q', url: BROWSER_PAGE, condition: 'load', key: 'Tab', y: 0 };
      if (name in browserValue) return browserValue[name];
    }
    // The file verbs work on the file alice uploaded (a new directory for mkdir, its directory for a watch).
    if (name === 'path' && operation.path.startsWith('/v1/sessions/{session_id}/files/'))
      return operation.path.endsWith('/mkdir') ? '/tmp/alice-dir' : operation.path.endsWith('/watch') ? '/tmp' : '/tmp/alice.txt';
    return validValue(doc, name, schema, {
      pick: (items) => items[0]!,
      optional: () => false,
      named: {
        code: fixed('print(1)'),
        port: fixed(8000),
        is_public: fixed(false),
        url: fixed(`${receiver.url}/x`),
        filename: fixed('/tmp/alice.txt'),
        remote_path: fixed('/tmp/bob.txt'),
        mount_path: fixed('/data'),
        path: fixed('index.html'),
        from: fixed('/tmp/alice.txt'),
        to: fixed('/tmp/alice-renamed.txt'),
        // Not the least a lifetime may be: alice's VM must outlive the matrix.
        lifetime_seconds: fixed(3600),
        // A second claim of the same name by its owner is a 409, which the controls accept.
        domain: fixed('matrix.example.com'),
        name: fixed('matrix-name'),
      },
    });
  };

  /** Every id input of an operation: path and query parameters, body properties. */
  const idInputs = (operation: Operation) => {
    const body = requestBodyOf(doc, operation);
    return [
      ...parametersOf(operation, 'path').map((p) => p.name),
      ...parametersOf(operation, 'query').map((p) => p.name),
      ...Object.keys(body?.schema.properties ?? {}),
    ].filter((name) => ID_NAME.test(name) && !(name in NOT_OWNED) && !(name in (OTHER_TARGET[`${operation.method} ${operation.path}`] ?? {})));
  };

  /** Sends the operation as `apiKey`, with the first user's ids. */
  const send = async (operation: Operation, apiKey: string): Promise<Sent> => {
    const pathParams: Record<string, string> = {};
    for (const p of parametersOf(operation, 'path'))
      pathParams[p.name === '*' ? 'path' : p.name] = fixtureFor(p.name, operation) ?? String(sample(p.name === '*' ? 'path' : p.name, p.schema, operation));
    const query: Record<string, string> = {};
    for (const p of parametersOf(operation, 'query')) {
      const fixture = ID_NAME.test(p.name) ? fixtureFor(p.name, operation) : undefined;
      if (fixture !== undefined) query[p.name] = fixture;
      else if (p.required) query[p.name] = String(sample(p.name, p.schema, operation));
    }
    const url = urlOf(operation.path, pathParams, query);
    const headers: Record<string, string> = { 'x-api-key': apiKey };
    let body: string | FormData | undefined;
    const declared = requestBodyOf(doc, operation);
    if (declared) {
      const values: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries<Schema>(declared.schema.properties ?? {})) {
        const fixture = ID_NAME.test(name) ? fixtureFor(name, operation) : undefined;
        if (fixture !== undefined) values[name] = fixture;
        else if ((declared.schema.required ?? []).includes(name) || name === 'code' || ALSO_SENT[operation.path]?.includes(name))
          values[name] = sample(name, schema, operation);
      }
      if (declared.mediaType === 'multipart/form-data') {
        const form = new FormData();
        for (const [name, value] of Object.entries(values)) if (name !== 'file') form.append(name, String(value));
        form.append('file', new Blob(['from bob']), 'bob.txt');
        body = form;
      } else if (declared.mediaType === 'application/x-www-form-urlencoded') {
        headers['content-type'] = declared.mediaType;
        body = new URLSearchParams(Object.entries(values).map(([k, v]): [string, string] => [k, String(v)])).toString();
      } else {
        headers['content-type'] = 'application/json';
        body = JSON.stringify(values);
      }
    }
    const response = await fetch(server.baseUrl + url, { method: operation.method, headers, redirect: 'manual', ...(body !== undefined ? { body } : {}) });
    // A stream that lasts until the client goes (a directory watch, followed output): its answer began, which is
    // what is checked; its body is not waited for.
    const streamed = /ndjson|event-stream/.test(response.headers.get('content-type') ?? '') && response.ok;
    if (streamed) await response.body?.cancel();
    const text = operation.method === 'HEAD' || streamed ? '' : await response.text();
    if (response.status === VIOLATION_STATUS) assert.fail(`${operation.method} ${url}: ${text}`);
    return {
      status: response.status,
      text,
      request: `${url} ${typeof body === 'string' ? body : JSON.stringify([...((body as FormData | undefined)?.entries() ?? [])])}`,
    };
  };

  /** A WebSocket attach as `apiKey`: the status of a refused handshake, or 101. */
  const attach = (operation: Operation, apiKey: string): Promise<number> =>
    new Promise((resolvePromise, reject) => {
      const sessionId = operation.path.startsWith('/v1/computeruse/') ? ids.desktop_session_id! : ids.session_id!;
      const url = urlOf(operation.path, { session_id: sessionId, vm_id: ids.vm_id!, pty_id: ids.pty_id! }).replace(/^/, server.baseUrl.replace(/^http/, 'ws'));
      const socket = new WebSocket(url, { headers: { 'x-api-key': apiKey } });
      socket.on('open', () => {
        socket.close();
        resolvePromise(101);
      });
      socket.on('unexpected-response', (_request, response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => {
          const leaked = secrets.filter((secret) => text.includes(secret) && !url.includes(secret));
          if (leaked.length > 0) reject(new Error(`attach answer leaks ${leaked.join(', ')}: ${text}`));
          else resolvePromise(response.statusCode ?? 0);
        });
      });
      socket.on('error', (error) => (error.message.includes('Unexpected server response') ? undefined : reject(error)));
    });

  const expectedFor = (operation: Operation): number[] => {
    if (operation.path === '/kill') return [403]; // the spec's answer for another user's session
    if (operation.path.startsWith('/v1/admin/')) return [403]; // administrators only, whatever the id
    return [404];
  };

  test("every operation with an id refuses the second user with 404 (403 on /kill), without any of the first user's data", async () => {
    const checked: string[] = [];
    const missing: string[] = [];
    const wrong: string[] = [];
    for (const operation of operationsOf(doc)) {
      const inputs = idInputs(operation);
      if (inputs.length === 0) continue;
      const name = `${operation.method} ${operation.path}`;
      const unknown = inputs.filter((input) => fixtureFor(input, operation) === undefined);
      if (unknown.length > 0) {
        missing.push(`${name}: no fixture for ${unknown.join(', ')}`);
        continue;
      }
      checked.push(name);
      if (operation.spec.responses?.['426']) {
        // A terminal's WebSocket: attach for real (plain HTTP answers 426 to everyone, before any lookup).
        const status = await attach(operation, bob.apiKey);
        if (status !== 404) wrong.push(`${name} (WebSocket): ${status}`);
        continue;
      }
      if (operation.path === '/v1/app/{session_id}/{port}') {
        // Adds the slash after the port for any session id, existing or not, before any lookup; what it
        // redirects to is checked as its own operation.
        const mine = await send(operation, bob.apiKey);
        const nobodys = await fetch(`${server.baseUrl}/v1/app/00000000-0000-4000-8000-000000000000/8000`, {
          method: operation.method,
          redirect: 'manual',
          headers: { 'x-api-key': bob.apiKey },
        });
        if (mine.status !== nobodys.status) wrong.push(`${name}: ${mine.status}, but ${nobodys.status} for a session that does not exist`);
        continue;
      }
      const answer = await send(operation, bob.apiKey);
      if (!expectedFor(operation).includes(answer.status)) wrong.push(`${name}: ${answer.status} ${answer.text.slice(0, 160)}`);
      // An element that was not found would say the session exists: another user's session is not found, full stop.
      if (answer.status === 404 && answer.text.includes('ELEMENT_NOT_FOUND')) wrong.push(`${name}: ${answer.text.slice(0, 160)}`);
      const leaked = secrets.filter((secret) => answer.text.includes(secret) && !answer.request.includes(secret));
      if (leaked.length > 0) wrong.push(`${name}: the answer holds the first user's ${leaked.join(', ')}`);
    }
    assert.deepEqual(missing, [], 'operations with ids the matrix has no fixture for: add them');
    assert.deepEqual(wrong, []);
    assert.ok(checked.length >= 40, `checked ${checked.length} operations`);
  });

  test("controls: the first user's own requests with the same ids are not 404 or 422, so the fixtures are right", async () => {
    const wrong: string[] = [];
    for (const operation of operationsOf(doc)) {
      if (idInputs(operation).length === 0) continue;
      // Destructive operations name the same ids as the reads that are controlled here.
      if (operation.method === 'DELETE' || operation.path === '/kill' || operation.path.startsWith('/v1/app/')) continue;
      // These suspend or multiply the owner's VM (the other user's 404 is checked above all the same).
      if (/\/(pause|clone|snapshot)$/.test(operation.path)) continue;
      const name = `${operation.method} ${operation.path}`;
      if (operation.spec.responses?.['426']) {
        const status = await attach(operation, alice.apiKey);
        if (status !== 101) wrong.push(`${name} (WebSocket): ${status}`);
        continue;
      }
      const answer = await send(operation, alice.apiKey);
      if (answer.status === 404 || answer.status === 422 || answer.status >= 500) wrong.push(`${name}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    assert.deepEqual(wrong, []);
  });
});
