/** The vault's placeholder handling without a VM: finding placeholders in a stream, and swapping them in headers. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newVaultPlaceholder } from '../../src/core/ids.ts';
import { PlaceholderScanner, placeholdersIn, swapHeader } from '../../src/core/vault/vault-gateway.ts';

describe('vault placeholders', () => {
  const a = newVaultPlaceholder();
  const b = newVaultPlaceholder();

  test('placeholders are found in text, once each; look-alikes are not', () => {
    assert.match(a, /^sbxv_[a-z2-7]{26}$/);
    assert.notEqual(a, b);
    assert.deepEqual(placeholdersIn(`Bearer ${a}, ${b} and ${a} again`), [a, b]);
    assert.deepEqual(placeholdersIn('sbxv_short sbxv_ABCDEFGHIJKLMNOPQRSTUVWXYZ no'), []);
  });

  test('a stream scanner reports a placeholder cut across chunks, and each one only once', () => {
    const scanner = new PlaceholderScanner();
    const stream = `GET / HTTP/1.1\r\nX-Key: ${a}\r\nX-Other: ${b}\r\nX-Again: ${a}\r\n\r\n`;
    const found: string[] = [];
    // Every cut of the stream into two chunks at every offset inside the first placeholder, and more.
    for (let size = 1; size <= 40; size += 3) {
      const s = new PlaceholderScanner();
      const seen: string[] = [];
      for (let i = 0; i < stream.length; i += size) seen.push(...s.push(Buffer.from(stream.slice(i, i + size), 'latin1')));
      assert.deepEqual(seen, [a, b], `chunks of ${size}`);
    }
    found.push(...scanner.push(Buffer.from(stream)));
    assert.deepEqual(found, [a, b]);
    assert.deepEqual(scanner.push(Buffer.from(`more ${a}`)), [], 'already reported');
  });

  test('headers: placeholders swapped in values, also inside Basic credentials; other headers untouched', () => {
    const swap = (text: string) => text.split(a).join('the-secret');
    assert.equal(swapHeader('Authorization', `Bearer ${a}`, swap), 'Bearer the-secret');
    const basic = `Basic ${Buffer.from(`me:${a}`).toString('base64')}`;
    assert.equal(swapHeader('authorization', basic, swap), `Basic ${Buffer.from('me:the-secret').toString('base64')}`);
    assert.equal(swapHeader('Proxy-Authorization', basic, swap), `Basic ${Buffer.from('me:the-secret').toString('base64')}`);
    // Base64 in another header is not decoded (only Authorization carries Basic credentials).
    assert.equal(swapHeader('X-Blob', basic, swap), basic);
    assert.equal(swapHeader('Authorization', 'Basic bm90aGluZw==', swap), 'Basic bm90aGluZw==');
  });
});
