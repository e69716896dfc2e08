import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RfbViewOnlyFilter } from '../../src/core/computer-use/rfb-view-only.ts';

/** Feeds `chunks` through a fresh filter; resolves with what passed, or rejects with the filter's error. */
async function filter(chunks: Buffer[]): Promise<Buffer> {
  const stream = new RfbViewOnlyFilter();
  const out: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await done;
  return Buffer.concat(out);
}

const handshake = Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1]), Buffer.from([1])]);
const setEncodings = Buffer.from([2, 0, 0, 2, 0, 0, 0, 7, 0xff, 0xff, 0xfe, 0xfc]);
const updateRequest = Buffer.from([3, 1, 0, 0, 0, 0, 5, 0, 3, 32]);
const key = Buffer.from([4, 1, 0, 0, 0, 0, 0, 0x61]);
const pointer = Buffer.from([5, 1, 0, 10, 0, 20]);
const cutText = Buffer.concat([Buffer.from([6, 0, 0, 0, 0, 0, 0, 3]), Buffer.from('abc')]);
const qemuKey = Buffer.from([255, 0, 0, 1, 0, 0, 0, 0x61, 0, 0, 0, 30]);
const desktopSize = Buffer.concat([Buffer.from([251, 0, 2, 0, 1, 0, 1, 0]), Buffer.alloc(16)]);
const fence = Buffer.concat([Buffer.from([248, 0, 0, 0, 0, 0, 0, 1, 2]), Buffer.from([9, 9])]);

describe('RFB view-only filter', () => {
  it('passes the handshake and the messages a viewer needs, drops every input', async () => {
    const input = Buffer.concat([handshake, setEncodings, key, pointer, updateRequest, cutText, qemuKey, desktopSize, fence, pointer]);
    assert.deepEqual(await filter([input]), Buffer.concat([handshake, setEncodings, updateRequest, fence]));
  });

  it('works whatever the chunking, one byte at a time included', async () => {
    const input = Buffer.concat([handshake, pointer, setEncodings, key, updateRequest]);
    const bytes = [...input].map((byte) => Buffer.from([byte]));
    assert.deepEqual(await filter(bytes), Buffer.concat([handshake, setEncodings, updateRequest]));
  });

  it('knows RFB 3.3, where the client sends no security choice', async () => {
    const old = Buffer.concat([Buffer.from('RFB 003.003\n'), Buffer.from([1])]);
    assert.deepEqual(await filter([Buffer.concat([old, key, updateRequest])]), Buffer.concat([old, updateRequest]));
  });

  it('ends the connection on a message it cannot size, or one too large to hold', async () => {
    await assert.rejects(filter([Buffer.concat([handshake, Buffer.from([99, 0, 0, 0])])]), /unknown RFB client message type 99/);
    const huge = Buffer.from([6, 0, 0, 0, 0x10, 0, 0, 0]);
    await assert.rejects(filter([Buffer.concat([handshake, huge])]), /larger than a viewer needs/);
  });
});
