import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  encodeAgentReady,
  encodeHostHello,
  findAgentReady,
  findHostHello,
  HELLO_BYTES,
  HELLO_PADDING_BYTES,
  LINK_NONCE_BYTES,
} from '../src/protocol/link-sync.ts';

const nonce = Buffer.alloc(LINK_NONCE_BYTES, 0xab);

describe('link sync bytes', () => {
  it('finds a hello behind junk and padding', () => {
    const junk = Buffer.from('old session leftovers');
    const padded = encodeHostHello(nonce, true);
    assert.equal(padded.length, HELLO_PADDING_BYTES + HELLO_BYTES);
    const match = findHostHello(Buffer.concat([junk, padded, Buffer.from('PRI')]));
    assert.ok(match);
    assert.deepEqual(match.nonce, nonce);
    assert.equal(match.end, junk.length + padded.length);
  });

  it('reports no hello while it is cut off', () => {
    const hello = encodeHostHello(nonce);
    assert.equal(findHostHello(hello.subarray(0, hello.length - 1)), null);
  });

  it('makes an HTTP/2 parser see an impossible frame length', () => {
    // The first three bytes of a frame header are its length: 0xFFFFFF exceeds any allowed frame size.
    assert.equal(encodeHostHello(nonce).readUIntBE(0, 3), 0xffffff);
  });

  it('matches the answer only with our nonce', () => {
    const answer = Buffer.concat([Buffer.from('stale'), encodeAgentReady(nonce), Buffer.from('SETTINGS')]);
    assert.equal(findAgentReady(answer, Buffer.alloc(LINK_NONCE_BYTES, 1)), -1);
    assert.equal(answer.subarray(findAgentReady(answer, nonce)).toString(), 'SETTINGS');
  });
});
