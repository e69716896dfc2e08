/** The bounded output log of kept execs: running offsets, the newest bytes kept, replays cut at an offset, order kept. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mergeBySeq, OutputLog } from '../src/exec/output-log.ts';

const text = (chunks: { data: Buffer }[]): string => Buffer.concat(chunks.map((chunk) => chunk.data)).toString();

describe('OutputLog', () => {
  it('counts every byte and keeps only the newest ones, cutting the oldest chunk when needed', () => {
    const log = new OutputLog(10);
    log.push(1, Buffer.from('abcdef'));
    log.push(2, Buffer.from('ghij'));
    assert.equal(text(log.from(0)), 'abcdefghij');
    log.push(3, Buffer.from('klm'));
    assert.equal(log.total, 13);
    assert.equal(log.oldest, 3);
    assert.equal(text(log.from(0)), 'defghijklm');
    assert.equal(log.from(0)[0]?.offset, 3);
  });

  it('starts a replay at the offset asked for, or at the oldest byte kept, never past the end', () => {
    const log = new OutputLog(8);
    for (let seq = 1; seq <= 5; seq++) log.push(seq, Buffer.from(`${seq}${seq}${seq}`));
    assert.equal(log.total, 15);
    assert.equal(log.startFor(0), 7);
    assert.equal(log.startFor(10), 10);
    assert.equal(log.startFor(99), 15);
    assert.equal(text(log.from(log.startFor(10))), '44555');
    assert.deepEqual(log.from(15), []);
  });

  it('stays bounded over many small chunks', () => {
    const log = new OutputLog(1000);
    for (let seq = 1; seq <= 100_000; seq++) log.push(seq, Buffer.from('xy'));
    assert.equal(log.total, 200_000);
    assert.equal(text(log.from(0)).length, 1000);
  });

  it('merges two logs in the order their chunks were read', () => {
    const out = new OutputLog(100);
    const err = new OutputLog(100);
    out.push(1, Buffer.from('a'));
    err.push(2, Buffer.from('B'));
    out.push(3, Buffer.from('c'));
    err.push(4, Buffer.from('D'));
    const merged = mergeBySeq(out.from(0), err.from(0));
    assert.deepEqual(
      merged.map(({ from, chunk }) => `${from}:${chunk.data.toString()}`),
      ['a:a', 'b:B', 'a:c', 'b:D'],
    );
  });
});
