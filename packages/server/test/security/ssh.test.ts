// test-lane: light (its server boots no VM; helpers/test-server.ts fails the file if one does)
/**
 * Security regression (issue 31, L-1): the SSH gateway's limits and its answers to key queries, against the real
 * server's gateway on loopback. Raw TCP clients for the login grace time and the connection cap, ssh2's client
 * for authentication. No VM: authentication and its refusals never need one (a channel would).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import ssh2, { type ParsedKey } from 'ssh2';
import { call, startTestServer, type TestServer } from '../helpers/test-server.ts';

const { Client, utils } = ssh2;
const GRACE_SECONDS = 1;
const MAX_AUTH_TRIES = 4;
const PER_SOURCE = 5;

/** An ed25519 key pair ssh2 reads back (it writes about one in 250 malformed). */
function keyPair(): { private: string; public: string } {
  for (;;) {
    const pair = utils.generateKeyPairSync('ed25519');
    if (!(utils.parseKey(pair.public) instanceof Error) && !(utils.parseKey(pair.private) instanceof Error)) return pair;
  }
}

function parsed(text: string): ParsedKey {
  const key = utils.parseKey(text);
  assert.ok(!(key instanceof Error) && !Array.isArray(key), String(key));
  return key as ParsedKey;
}

/** Resolves when the socket is closed, with the milliseconds since `since`; null after `limitMs`. */
function closedWithin(socket: net.Socket, since: number, limitMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), limitMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(Date.now() - since);
    });
  });
}

/** Whether a new connection to the gateway is greeted with its version line (within 300 ms). */
async function greetsOn(port: number): Promise<boolean> {
  const socket = net.connect(port, '127.0.0.1');
  try {
    return await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 300);
      socket.once('data', () => {
        clearTimeout(timer);
        resolve(true);
      });
      socket.once('close', () => {
        clearTimeout(timer);
        resolve(false);
      });
      socket.once('error', () => undefined);
    });
  } finally {
    socket.destroy();
  }
}

describe('security: SSH gateway (L-1)', () => {
  let server: TestServer;
  let port: number;
  let alice: { apiKey: string; userId: number };
  let bob: { apiKey: string; userId: number };
  const aliceKey = keyPair();
  const bobKey = keyPair();
  let aliceSession: string;
  let bobSession: string;

  /** One ssh2 client run to its end: whether it logged in, how often it was asked for the next method, what it said. */
  function login(username: string, keys: (ParsedKey | string)[]): Promise<{ ready: boolean; offered: number; errors: string[] }> {
    return new Promise((resolve) => {
      const client = new Client();
      const errors: string[] = [];
      let offered = 0;
      let ready = false;
      client.on('ready', () => {
        ready = true;
        client.end();
      });
      client.on('error', (error) => errors.push(error.message));
      client.on('close', () => resolve({ ready, offered, errors }));
      client.connect({
        host: '127.0.0.1',
        port,
        username,
        readyTimeout: 15_000,
        authHandler: (_methodsLeft, _partial, next) => {
          const key = keys[offered++];
          if (key === undefined) return next(false as never);
          next({ type: 'publickey', username, key } as never);
        },
      });
    });
  }

  const greets = () => greetsOn(port);

  before(async () => {
    server = await startTestServer({
      config: { sshLoginGraceSeconds: GRACE_SECONDS, sshMaxAuthTries: MAX_AUTH_TRIES, sshMaxConnectionsPerSource: PER_SOURCE },
    });
    assert.ok(server.sshGateway, 'the gateway listens');
    port = server.sshGateway.port;
    alice = await server.createUserWithKey('ssh-sec-alice');
    bob = await server.createUserWithKey('ssh-sec-bob');
    for (const [user, pair] of [
      [alice, aliceKey],
      [bob, bobKey],
    ] as const) {
      const created = await call(server, 'POST', '/v1/ssh-keys', { apiKey: user.apiKey, json: { public_key: pair.public } });
      assert.equal(created.status, 201, created.text);
    }
    // Sessions without a VM: a login to one resolves its owner, and no channel is opened here.
    aliceSession = (await call(server, 'POST', '/v1/sessions/session', { apiKey: alice.apiKey, json: {} })).body.session_id;
    bobSession = (await call(server, 'POST', '/v1/sessions/session', { apiKey: bob.apiKey, json: {} })).body.session_id;
  });
  after(async () => {
    await server?.close();
  });

  test('L-1: an SSH client that never authenticates is dropped', async () => {
    const started = Date.now();
    const limitMs = GRACE_SECONDS * 1000 + 3000;
    // One that never says a word, one that sends its version line and then idles in the key exchange.
    const silent = net.connect(port, '127.0.0.1');
    const talker = net.connect(port, '127.0.0.1');
    await Promise.all([once(silent, 'connect'), once(talker, 'connect')]);
    talker.write('SSH-2.0-idle_probe\r\n');
    let banner = '';
    talker.on('data', (chunk: Buffer) => (banner += chunk.toString('latin1')));
    silent.resume();
    const [silentMs, talkerMs] = await Promise.all([closedWithin(silent, started, limitMs), closedWithin(talker, started, limitMs)]);
    silent.destroy();
    talker.destroy();
    assert.match(banner, /^SSH-2\.0-sandboxd/, 'the gateway spoke SSH to the one that did');
    assert.notEqual(silentMs, null, `a silent connection was still open after ${limitMs} ms`);
    assert.notEqual(talkerMs, null, `a connection idle after its version line was still open after ${limitMs} ms`);
    assert.ok(silentMs! >= GRACE_SECONDS * 1000 - 100 && talkerMs! >= GRACE_SECONDS * 1000 - 100, `dropped before the grace time: ${silentMs}, ${talkerMs} ms`);

    // The connection cap per source: beyond it a connection is closed at once, before any SSH is spoken.
    const held = await Promise.all(
      Array.from({ length: PER_SOURCE }, async () => {
        const socket = net.connect(port, '127.0.0.1');
        await once(socket, 'connect');
        socket.resume();
        return socket;
      }),
    );
    const extra = net.connect(port, '127.0.0.1');
    let extraBytes = 0;
    extra.on('data', (chunk: Buffer) => (extraBytes += chunk.length));
    const extraClosedMs = await closedWithin(extra, Date.now(), GRACE_SECONDS * 1000 - 200);
    assert.notEqual(extraClosedMs, null, 'a connection beyond the per-source cap was held');
    assert.equal(extraBytes, 0, 'it was refused before the version exchange');
    for (const socket of held) socket.destroy();
    // The gateway counts them out as it sees them close.
    for (let attempt = 0; !(await greets()); attempt++) assert.ok(attempt < 50, 'the per-source count never went down');
  });

  test('L-1: authentication attempts per connection are capped', async () => {
    // Each key has a valid signature and is nobody's: every attempt is a database-backed failure.
    const keys = Array.from({ length: 20 }, () => parsed(keyPair().private));
    const run = await login(aliceSession, keys);
    assert.equal(run.ready, false);
    // The client may hand over one more key before it reads the disconnect that follows the last failure.
    assert.ok(run.offered <= MAX_AUTH_TRIES + 1, `the connection allowed ${run.offered} attempts (cap ${MAX_AUTH_TRIES})`);
    assert.ok(run.offered >= MAX_AUTH_TRIES - 1, `only ${run.offered} attempts were made`);
    // The owner's key still logs in, on a connection of its own.
    assert.equal((await login(aliceSession, [parsed(aliceKey.private)])).ready, true);
  });

  test("L-1: a key query answers the same whether or not the key's owner has the VM", async () => {
    /**
     * Offers alice's key with a signer that refuses, as someone who holds only the public key would: the client
     * first asks whether the key would do. When the gateway says yes (PK_OK) the client tries to sign and
     * reports that it could not; when it says no, the client just runs out of methods.
     */
    const publicOnly = (): ParsedKey => {
      const key = parsed(aliceKey.private);
      (key as unknown as { sign: () => Error }).sign = () => new Error('only the public key is known');
      return key;
    };
    const query = async (username: string) => {
      const run = await login(username, [publicOnly()]);
      assert.equal(run.ready, false);
      return run.errors.some((message) => /signing data with key/i.test(message)) ? 'PK_OK' : 'refused';
    };
    const answers = {
      ownSession: await query(aliceSession),
      othersSession: await query(bobSession),
      unknownVm: await query('vm-aaaaaaaaaaaaaaaa'),
      unknownSession: await query('00000000-0000-4000-8000-000000000000'),
    };
    assert.deepEqual(answers, { ownSession: 'PK_OK', othersSession: 'PK_OK', unknownVm: 'PK_OK', unknownSession: 'PK_OK' });
    // Signed attempts still decide by ownership.
    assert.equal((await login(aliceSession, [parsed(aliceKey.private)])).ready, true);
    assert.equal((await login(bobSession, [parsed(aliceKey.private)])).ready, false);
  });
});
