// test-lane: light (a buffer in memory: no store, no server)
/** The egress and vault logs' buffer: batches in order, a refused batch back in front, the oldest rows dropped past the cap. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LogBuffer } from '../../src/core/log-buffer.ts';

test('writes in order, batch by batch; a refused batch comes back in front and nothing is lost', async () => {
  const buffer = new LogBuffer<number>({ batchRows: 3, maxRows: 100 });
  for (let row = 1; row <= 7; row++) buffer.push(row);
  const written: number[][] = [];
  await buffer.writeBatch(async (batch) => void written.push(batch));
  assert.deepEqual(written, [[1, 2, 3]]);
  await assert.rejects(
    buffer.writeBatch(async () => Promise.reject(new Error('the store is down'))),
    /the store is down/,
  );
  assert.equal(buffer.size, 4);
  await buffer.writeAll(async (batch) => void written.push(batch));
  assert.deepEqual(written, [[1, 2, 3], [4, 5, 6], [7]]);
  assert.equal(buffer.size, 0);
  await buffer.writeBatch(async () => assert.fail('nothing to write'));
});

test('past its cap the oldest rows go, on push and when a refused batch comes back', async () => {
  const buffer = new LogBuffer<number>({ batchRows: 2, maxRows: 4 });
  for (let row = 1; row <= 6; row++) buffer.push(row);
  assert.equal(buffer.size, 4);
  await assert.rejects(buffer.writeBatch(async () => Promise.reject(new Error('refused'))));
  buffer.push(7);
  const written: number[] = [];
  await buffer.writeAll(async (batch) => void written.push(...batch));
  assert.deepEqual(written, [4, 5, 6, 7]);
});
