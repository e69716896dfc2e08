/**
 * The virtio-serial link's real fd code (reader worker, write queue) over two FIFOs. A FIFO's read end behaves
 * like a port: reads return 0 while no writer is open (no host) and data again once one opens (a new host).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { constants, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { VirtioPortLink } from '../src/link/virtio-port-link.ts';

/** Generous, so that the test below stays within it on a loaded machine. */
const CONFIRM_MS = 500;

describe('virtio port link over FIFOs', () => {
  let dir: string;
  let toGuest: string;
  let fromGuest: string;
  let link: VirtioPortLink;
  let fromGuestReader: Socket;
  const received: Buffer[] = [];
  const fromGuestBytes: Buffer[] = [];
  let hangups = 0;

  const until = async (condition: () => boolean, what: string): Promise<void> => {
    const deadline = Date.now() + 5000;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const openHost = (): Socket => new Socket({ fd: openSync(toGuest, constants.O_WRONLY | constants.O_NONBLOCK), readable: false, writable: true });

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sandboxd-port-test-'));
    toGuest = join(dir, 'to-guest');
    fromGuest = join(dir, 'from-guest');
    execFileSync('mkfifo', [toGuest, fromGuest]);
    const readFd = openSync(toGuest, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeFd = openSync(fromGuest, constants.O_RDWR);
    fromGuestReader = new Socket({ fd: openSync(fromGuest, constants.O_RDONLY | constants.O_NONBLOCK), readable: true, writable: false });
    fromGuestReader.on('data', (chunk: Buffer) => fromGuestBytes.push(chunk));
    link = new VirtioPortLink(readFd, writeFd, 'fifo-port', { pollMinMs: 1, pollMaxMs: 10, hangupConfirmMs: CONFIRM_MS });
    link.start({
      data: (chunk) => received.push(chunk),
      hangup: () => hangups++,
      closed: () => undefined,
    });
  });
  after(async () => {
    link.close();
    fromGuestReader.destroy();
    await rm(dir, { recursive: true, force: true });
  });

  it('delivers bytes from the host, reports one hangup per disconnect, and reads again after a reconnect', async () => {
    const first = openHost();
    first.write('hello ');
    await until(() => Buffer.concat(received).toString() === 'hello ', 'first bytes');
    first.destroy();
    await until(() => hangups === 1, 'the hangup');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(hangups, 1, 'polling an absent host must not repeat the hangup');
    const second = openHost();
    second.write('again');
    await until(() => Buffer.concat(received).toString() === 'hello again', 'bytes from the next host');
    second.destroy();
    await until(() => hangups === 2, 'the second hangup');
  });

  it('a host that is back within the confirmation time is no hangup: a quick reconnect is not cut off', async () => {
    // In a VM the guest may see the old host leave after the new one's first bytes (virtio-serial's control and data
    // queues are not ordered); a hangup reported then reset the new host's link sync. Here: the reader sees the old
    // host gone (a 0-byte read), and the next one is there before the confirmation.
    received.length = 0;
    const before = hangups;
    const first = openHost();
    first.write('one ');
    await until(() => Buffer.concat(received).toString() === 'one ', "the first host's bytes");
    first.destroy();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const second = openHost();
    second.write('two');
    await until(() => Buffer.concat(received).toString() === 'one two', "the next host's bytes");
    await new Promise((resolve) => setTimeout(resolve, CONFIRM_MS + 100));
    assert.equal(hangups, before, 'no hangup for a host that came back at once');
    second.destroy();
    await until(() => hangups === before + 1, 'the hangup once the host is really gone');
  });

  it('writes large buffers completely and in order', async () => {
    const payload = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < payload.length; i++) payload[i] = i % 251;
    link.write(payload.subarray(0, 600_000));
    link.write(payload.subarray(600_000));
    await until(() => Buffer.concat(fromGuestBytes).length >= payload.length, 'the written bytes');
    assert.deepEqual(Buffer.concat(fromGuestBytes), payload);
  });

  it('holds data back while paused', async () => {
    received.length = 0;
    link.pause();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const host = openHost();
    host.write('held');
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(received.length, 0);
    link.resume();
    await until(() => Buffer.concat(received).toString() === 'held', 'the held bytes');
    host.destroy();
  });
});
