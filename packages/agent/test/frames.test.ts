import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import {
  decodeJsonPayload,
  encodeFrame,
  encodeJsonFrame,
  FrameDecoder,
  FrameError,
  FrameType,
  MAX_FRAME_PAYLOAD_BYTES,
  readFrames,
} from '../src/protocol/frames.ts';

describe('exec frame codec', () => {
  it('round-trips frames split at every byte boundary', () => {
    const frames = [
      encodeFrame(FrameType.Stdout, Buffer.from([0, 1, 2, 255])),
      encodeJsonFrame(FrameType.Exit, { exitCode: 0 }),
      encodeFrame(FrameType.StdinEnd),
    ];
    const wire = Buffer.concat(frames);
    for (let split = 0; split <= wire.length; split++) {
      const decoder = new FrameDecoder();
      const decoded = [...decoder.push(wire.subarray(0, split)), ...decoder.push(wire.subarray(split))];
      assert.deepEqual(
        decoded.map((frame) => frame.type),
        [FrameType.Stdout, FrameType.Exit, FrameType.StdinEnd],
      );
      assert.deepEqual(decoded[0]?.payload, Buffer.from([0, 1, 2, 255]));
      assert.deepEqual(decodeJsonPayload(decoded[1] as never), { exitCode: 0 });
      assert.equal(decoded[2]?.payload.length, 0);
      decoder.end();
    }
  });

  it('decodes byte by byte', () => {
    const wire = encodeFrame(FrameType.Stderr, 'hello');
    const decoder = new FrameDecoder();
    const frames = [...wire].flatMap((byte) => decoder.push(Buffer.from([byte])));
    assert.equal(frames.length, 1);
    assert.equal(frames[0]?.payload.toString(), 'hello');
  });

  it('rejects oversized and cut-off frames', async () => {
    const header = Buffer.alloc(5);
    header.writeUInt32BE(MAX_FRAME_PAYLOAD_BYTES + 1, 1);
    assert.throws(() => new FrameDecoder().push(header), FrameError);
    const cut = encodeFrame(FrameType.Stdout, 'abcdef').subarray(0, 7);
    await assert.rejects(async () => {
      for await (const frame of readFrames(Readable.from([cut]))) void frame;
    }, FrameError);
  });
});
