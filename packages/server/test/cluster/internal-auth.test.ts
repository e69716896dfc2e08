/**
 * The signature of internal cluster requests (core/cluster/internal-auth.ts), the agent RPC's argument schemas
 * and the internal listener's settings, without a server: a genuine request passes once; a tampered body,
 * another destination, a replayed nonce, a stale or future time, another method, path or query, and another
 * secret are each refused.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkAgentArgs } from '../../src/cluster/agent-rpc-args.ts';
import { bodySha256, checkSignedBody, InternalAuth, MAX_SKEW_MS, SeenNonces } from '../../src/core/cluster/internal-auth.ts';
import { AppError, InputError } from '../../src/core/errors.ts';
import { loadConfig } from '../../src/config/index.ts';

const SECRET = 'a-cluster-secret-of-at-least-32-characters';
const PATH = '/internal/v1/commands';
const BODY = JSON.stringify({ op: 'egress.policy', principal: { userId: 1, isAdmin: false }, vm_id: 'vm-1', policy: null });

function nodes() {
  return { a: new InternalAuth(SECRET, 'node-a'), b: new InternalAuth(SECRET, 'node-b'), c: new InternalAuth(SECRET, 'node-c') };
}

/** The error code a call throws (AppError), or 'ok'. */
function outcome(run: () => unknown): string {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
}

describe('internal request signatures', () => {
  test('a request signed by A for B passes B once, with the sender named', () => {
    const { a, b } = nodes();
    const headers = a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY });
    assert.equal(b.verify('POST', PATH, headers, Buffer.from(BODY)), 'node-a');
  });

  test('a tampered body is refused (the same headers, another principal)', () => {
    const { a, b } = nodes();
    const headers = a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY });
    const forged = BODY.replace('"isAdmin":false', '"isAdmin":true');
    assert.equal(
      outcome(() => b.verify('POST', PATH, headers, forged)),
      'INVALID_CREDENTIALS',
    );
  });

  test('an empty body is hashed too: a body added to a bodiless request is refused', () => {
    const { a, b } = nodes();
    const headers = a.sign({ method: 'GET', pathWithQuery: PATH, destination: 'node-b' });
    assert.equal(headers['x-sandboxd-body-sha256'], bodySha256(''));
    assert.equal(
      outcome(() => b.verify('GET', PATH, headers, '{}')),
      'INVALID_CREDENTIALS',
    );
    const again = a.sign({ method: 'GET', pathWithQuery: PATH, destination: 'node-b', body: null });
    assert.equal(b.verify('GET', PATH, again, Buffer.alloc(0)), 'node-a');
  });

  test('a request signed for another node is refused there, and a rewritten destination breaks the MAC', () => {
    const { a, b, c } = nodes();
    const headers = a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY });
    assert.throws(() => c.verify('POST', PATH, headers, BODY), /signed for node node-b, this is node node-c/);
    const rewritten = { ...headers, 'x-sandboxd-destination': 'node-c' };
    assert.throws(() => c.verify('POST', PATH, rewritten, BODY), /bad internal request signature/);
    assert.equal(b.verify('POST', PATH, headers, BODY), 'node-a', 'the node it was signed for still takes it');
  });

  test('the same signed request twice is refused (nonce); a new signature of the same request passes', () => {
    const { a, b } = nodes();
    const headers = a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY });
    assert.equal(b.verify('POST', PATH, headers, BODY), 'node-a');
    assert.throws(() => b.verify('POST', PATH, headers, BODY), /already received once/);
    assert.equal(b.verify('POST', PATH, a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY }), BODY), 'node-a');
  });

  test('a time outside the window is refused, before and after', () => {
    const { a, b } = nodes();
    const now = Date.now();
    const old = a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY }, now - MAX_SKEW_MS - 1);
    assert.throws(() => b.verify('POST', PATH, old, BODY, now), /too long ago/);
    const future = a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY }, now + MAX_SKEW_MS + 1);
    assert.throws(() => b.verify('POST', PATH, future, BODY, now), /too long ago/);
    const edge = a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY }, now - MAX_SKEW_MS);
    assert.equal(b.verify('POST', PATH, edge, BODY, now), 'node-a');
  });

  test('another method, path or query is refused', () => {
    const { a, b } = nodes();
    const sign = () => a.sign({ method: 'POST', pathWithQuery: `${PATH}?x=1`, destination: 'node-b', body: BODY });
    assert.equal(
      outcome(() => b.verify('PUT', `${PATH}?x=1`, sign(), BODY)),
      'INVALID_CREDENTIALS',
    );
    assert.equal(
      outcome(() => b.verify('POST', '/internal/v1/agent/vm-1/exec?x=1', sign(), BODY)),
      'INVALID_CREDENTIALS',
    );
    assert.equal(
      outcome(() => b.verify('POST', `${PATH}?x=2`, sign(), BODY)),
      'INVALID_CREDENTIALS',
    );
    assert.equal(
      outcome(() => b.verify('post', `${PATH}?x=1`, sign(), BODY)),
      'ok',
      'the method is case-insensitive',
    );
  });

  test('unsigned requests, forged signatures and another secret are refused', () => {
    const { a } = nodes();
    const b = new InternalAuth(SECRET, 'node-b');
    assert.equal(
      outcome(() => b.verify('POST', PATH, {}, BODY)),
      'NOT_AUTHENTICATED',
    );
    const headers = a.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY });
    assert.equal(
      outcome(() => b.verify('POST', PATH, { ...headers, 'x-sandboxd-signature': 'forged' }, BODY)),
      'INVALID_CREDENTIALS',
    );
    const stranger = new InternalAuth('another-secret-of-at-least-32-characters!', 'node-a');
    assert.equal(
      outcome(() => b.verify('POST', PATH, stranger.sign({ method: 'POST', pathWithQuery: PATH, destination: 'node-b', body: BODY }), BODY)),
      'INVALID_CREDENTIALS',
    );
    // A refused forgery leaves no nonce behind: the genuine request with that nonce still passes.
    assert.equal(b.verify('POST', PATH, headers, BODY), 'node-a');
  });

  test('checkSignedBody compares the raw bytes, not a re-serialisation', () => {
    const verified = { from: 'node-a', bodySha256: bodySha256('{"a":1}') };
    assert.doesNotThrow(() => checkSignedBody(verified, Buffer.from('{"a":1}')));
    assert.throws(() => checkSignedBody(verified, '{ "a": 1 }'), /not the one that was signed/);
  });
});

describe('the nonce cache', () => {
  test('is bounded: full of live nonces it refuses (503) rather than forget one; expired ones make room', () => {
    const seen = new SeenNonces(3);
    const now = 1_000_000;
    assert.ok(seen.add('n1', now + 10, now));
    assert.ok(seen.add('n2', now + 20, now));
    assert.ok(seen.add('n3', now + 30, now));
    assert.equal(seen.add('n1', now + 10, now), false, 'a replay');
    assert.equal(
      outcome(() => seen.add('n4', now + 40, now)),
      'SERVICE_UNAVAILABLE',
    );
    assert.ok(seen.add('n4', now + 40, now + 15), 'n1 expired and was forgotten');
    assert.equal(seen.size, 3);
    assert.ok(seen.add('n1', now + 100, now + 25), 'an expired nonce is forgotten (its request fails the time check anyway)');
  });

  test('forgets nonces as their time leaves the window', () => {
    const seen = new SeenNonces(100);
    for (let i = 0; i < 50; i++) seen.add(`n${i}`, 1000 + i, 0);
    seen.add('late', 5000, 1025);
    assert.equal(seen.size, 25, 'the 26 expired ones are gone');
  });
});

describe('agent RPC arguments', () => {
  test('each op takes its own shape; other shapes are refused before the agent sees them', () => {
    assert.deepEqual(checkAgentArgs('exec', { argv: ['id'], stdin: false }), { argv: ['id'], stdin: false });
    assert.deepEqual(checkAgentArgs('stat', { path: '/root' }), { path: '/root' });
    assert.equal(checkAgentArgs('usage', null), null);
    assert.throws(() => checkAgentArgs('exec', { argv: 'rm -rf /' }), InputError);
    assert.throws(() => checkAgentArgs('exec', { command: ['id'] }), InputError);
    assert.throws(() => checkAgentArgs('openTunnel', { port: 70_000 }), InputError);
    assert.throws(() => checkAgentArgs('resizePty', { id: 'pty-1', cols: '80', rows: 24 }), InputError);
    assert.throws(() => checkAgentArgs('usage', { path: '/' }), InputError);
  });

  test('fields an op does not take are dropped, never passed on', () => {
    assert.deepEqual(checkAgentArgs('stat', { path: '/root', recursive: true }), { path: '/root' });
    assert.deepEqual(checkAgentArgs('remove', { path: '/x', options: { recursive: true, force: true } }), { path: '/x', options: { recursive: true } });
  });
});

describe('the internal listener settings', () => {
  test('by default on loopback, the public port + 2; the internal URL follows it', () => {
    const config = loadConfig({ SANDBOXD_PORT: '8080' });
    assert.equal(config.cluster.internalListen, '127.0.0.1:8082');
    assert.equal(config.cluster.internalUrl, 'http://127.0.0.1:8082');
    const onPrivateAddress = loadConfig({ SANDBOXD_PORT: '8080', SANDBOXD_INTERNAL_LISTEN: '10.0.0.2:9000' });
    assert.equal(onPrivateAddress.cluster.internalUrl, 'http://10.0.0.2:9000');
    const proxied = loadConfig({ SANDBOXD_PORT: '8080', SANDBOXD_INTERNAL_LISTEN: '0.0.0.0:9000', SANDBOXD_INTERNAL_URL: 'https://node-2.internal:8443' });
    assert.equal(proxied.cluster.internalUrl, 'https://node-2.internal:8443');
  });

  test('refused: an internal URL on the public port with no listener of its own, every address with no URL, off in cluster mode', () => {
    assert.throws(
      () => loadConfig({ SANDBOXD_PORT: '8080', SANDBOXD_INTERNAL_URL: 'http://10.0.0.2:8080' }),
      /SANDBOXD_INTERNAL_LISTEN to this node's private address/,
    );
    assert.throws(() => loadConfig({ SANDBOXD_PORT: '8080', SANDBOXD_INTERNAL_LISTEN: '0.0.0.0:8082' }), /SANDBOXD_INTERNAL_URL: required/);
    assert.throws(() => loadConfig({ SANDBOXD_INTERNAL_LISTEN: 'off', SANDBOXD_DATABASE_URL: 'postgres://x@127.0.0.1/x' }), /cannot be off in cluster mode/);
    assert.equal(loadConfig({ SANDBOXD_INTERNAL_LISTEN: 'off' }).cluster.internalListen, 'off');
    assert.throws(() => loadConfig({ SANDBOXD_INTERNAL_LISTEN: 'nowhere' }), /SANDBOXD_INTERNAL_LISTEN/);
  });
});
