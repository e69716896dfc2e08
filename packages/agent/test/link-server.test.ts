/**
 * The link state machine against an emulated virtio-serial port: one long-lived link on which hosts come and
 * go, sometimes without the guest seeing an EOF, and where a write in flight at a hangup reaches the next host.
 */
import assert from 'node:assert/strict';
import { createServer, type ClientHttp2Session, type Http2Server } from 'node:http2';
import { Duplex } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import type { ByteLink, ByteLinkEvents } from '../src/link/byte-link.ts';
import { LinkServer, type LinkEvent } from '../src/link/link-server.ts';
import { get, syncAndConnect as connectHost } from './host-link.ts';

/** The host's end of the emulated port: what it writes reaches the agent while it is the connected host. */
class HostEnd extends Duplex {
  constructor(private readonly port: FakePort) {
    super();
  }
  override _read(): void {}
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    if (this.port.host === this) this.port.events?.data(Buffer.from(chunk));
    callback();
  }
}

/**
 * Emulates a virtio port: agent writes while no host is connected are held (the kernel blocks them); on a
 * hangup the agent may drop queued ones, but the first stays "in the kernel" and reaches the next host.
 */
class FakePort implements ByteLink {
  readonly description = 'fake-port';
  events: ByteLinkEvents | undefined;
  host: HostEnd | undefined;
  private held: Buffer[] = [];

  start(events: ByteLinkEvents): void {
    this.events = events;
  }
  write(chunk: Buffer): void {
    if (this.host) this.host.push(chunk);
    else this.held.push(chunk);
  }
  discardPendingWrites(): void {
    this.held = this.held.slice(0, 1);
  }
  pause(): void {}
  resume(): void {}
  close(): void {
    this.events?.closed();
  }

  /** A new host connects (like QEMU's chardev socket accepting a client). */
  connectHost(): HostEnd {
    const host = new HostEnd(this);
    this.host = host;
    for (const stale of this.held) host.push(stale);
    this.held = [];
    return host;
  }

  /** The host disconnects and the guest sees EOF. */
  hangup(): void {
    const host = this.host;
    this.host = undefined;
    host?.push(null);
    this.events?.hangup();
  }

  /** The host disconnects but the guest never sees it (fast reconnect, snapshot restore). */
  vanishSilently(): void {
    this.host?.push(null);
    this.host = undefined;
  }
}

/** Hellos the last sync needed. */
let hellosSent = 0;
const syncAndConnect = (host: HostEnd): Promise<ClientHttp2Session> =>
  connectHost(host, (hellos) => {
    hellosSent = hellos;
  });

describe('link server on an emulated virtio port', () => {
  let http2: Http2Server;
  let port: FakePort;
  let link: LinkServer;
  const events: LinkEvent['type'][] = [];
  before(() => {
    http2 = createServer();
    http2.on('stream', (stream, headers) => {
      if (headers[':path'] === '/hang') return; // never answered: keeps a stream open
      const answer = (): void => {
        if (stream.closed) return;
        stream.respond({ ':status': 200 });
        stream.end(`answer to ${headers[':path']}`);
      };
      if (headers[':path'] === '/slow') setTimeout(answer, 30);
      else answer();
    });
    port = new FakePort();
    link = new LinkServer(port, http2, { onEvent: (event) => events.push(event.type), handoverGraceMs: 100 });
    link.start();
  });
  after(() => link.close());

  it('serves a host after link sync, ignoring junk before the hello', async () => {
    const host = port.connectHost();
    host.write('junk from a previous life');
    const session = await syncAndConnect(host);
    assert.equal(await get(session, '/one'), 'answer to /one');
    assert.equal(link.stateName, 'session');
    session.destroy();
    port.hangup();
    assert.equal(link.stateName, 'waiting-hello');
  });

  it('serves the next host after an EOF, even if a stale write reaches it first', async () => {
    const first = await syncAndConnect(port.connectHost());
    assert.equal(await get(first, '/a'), 'answer to /a');
    const slow = first.request({ ':path': '/slow' });
    slow.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 10));
    port.vanishSilently();
    // The agent answers into the void: the "kernel" holds that write and hands it to the next host.
    await new Promise((resolve) => setTimeout(resolve, 50));
    port.events?.hangup();
    const next = port.connectHost();
    const stale: Buffer[] = [];
    next.on('data', (chunk: Buffer) => stale.push(chunk));
    const second = await syncAndConnect(next);
    assert.ok(stale.length > 0 && Buffer.concat(stale).includes('answer to /slow'), 'the stale answer did not reach the next host first');
    assert.equal(await get(second, '/b'), 'answer to /b');
    second.destroy();
    port.hangup();
  });

  it('serves a new host that arrives without any EOF, while the old session is inside a frame', async () => {
    const oldEnd = port.connectHost();
    const old = await syncAndConnect(oldEnd);
    // POST keeps the request body (stream 1) open: a DATA frame on it is legal.
    const hanging = old.request({ ':method': 'POST', ':path': '/hang' });
    hanging.on('error', () => undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The old host dies in the middle of a 16 KiB DATA frame on its open stream 1: the agent's parser now
    // expects 15 KiB more payload, and would swallow an unpadded hello whole.
    const header = Buffer.from([0x00, 0x40, 0x00, 0x0, 0x0, 0, 0, 0, 1]);
    oldEnd.write(Buffer.concat([header, Buffer.alloc(1000)]));
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(link.stateName, 'session', 'the old session must still be alive');
    port.vanishSilently();
    const started = performance.now();
    const fresh = await syncAndConnect(port.connectHost());
    assert.equal(await get(fresh, '/fresh'), 'answer to /fresh');
    assert.ok(performance.now() - started < 2000);
    assert.ok(hellosSent >= 2, 'the first hello should have been swallowed by the stale session');
    assert.ok(events.includes('session-end'));
    fresh.destroy();
    port.hangup();
  });

  it('hands the link over after snapshot preparation and answers the next hello at once', async () => {
    const before = await syncAndConnect(port.connectHost());
    assert.equal(await get(before, '/prepare'), 'answer to /prepare');
    link.handover();
    assert.equal(link.stateName, 'waiting-hello');
    // The restored clone: the old host is gone without a trace, a new one says hello.
    port.vanishSilently();
    const started = performance.now();
    const after = await syncAndConnect(port.connectHost());
    assert.ok(performance.now() - started < 40, 'the first hello must be answered, no repeat needed');
    assert.equal(await get(after, '/restored'), 'answer to /restored');
    after.destroy();
    port.hangup();
  });
});
