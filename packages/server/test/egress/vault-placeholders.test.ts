/** The vault's placeholder handling without a VM: finding placeholders in a stream, and swapping them at their injection points only. */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newVaultPlaceholder } from '../../src/core/ids.ts';
import { injectSecrets, normalizeInjection, type InjectableSecret, type Injection } from '../../src/core/vault/injection.ts';
import { PlaceholderScanner, placeholdersIn } from '../../src/core/vault/vault-gateway.ts';

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

  test('injection points are checked: a header name, a printable prefix, not Host or the framing headers', () => {
    assert.deepEqual(normalizeInjection(undefined, 'K'), { type: 'bearer' });
    assert.deepEqual(normalizeInjection({ type: 'basic' }, 'K'), { type: 'basic' });
    assert.deepEqual(normalizeInjection({ type: 'header', name: 'X-Api-Key' }, 'K'), { type: 'header', name: 'X-Api-Key', prefix: '' });
    assert.deepEqual(normalizeInjection({ type: 'header', name: 'Authorization', prefix: 'token ' }, 'K'), {
      type: 'header',
      name: 'Authorization',
      prefix: 'token ',
    });
    for (const bad of [
      { type: 'header' },
      { type: 'header', name: 'Host' },
      { type: 'header', name: 'x y' },
      { type: 'header', name: 'Content-Length' },
      { type: 'header', name: 'Origin' },
      { type: 'header', name: 'X', prefix: 'a\nb' },
      { type: 'bearer', name: 'X' },
      { type: 'cookie' },
    ]) {
      assert.throws(() => normalizeInjection(bad, 'K'), /inject/, JSON.stringify(bad));
    }
  });

  test('a placeholder is swapped only at its injection point; everywhere else it stays and is reported', () => {
    const secrets = new Map<string, InjectableSecret>();
    const as = (placeholder: string, injection: Injection, value: string | null = `value-of-${placeholder.slice(-4)}`) =>
      secrets.set(placeholder, { injection, value });
    const lookup = (placeholder: string) => secrets.get(placeholder);
    const c = newVaultPlaceholder();
    as(a, { type: 'bearer' });
    as(b, { type: 'header', name: 'X-Api-Key', prefix: '' });
    as(c, { type: 'header', name: 'Authorization', prefix: 'token ' });
    const valueA = secrets.get(a)!.value!;
    const valueB = secrets.get(b)!.value!;

    const ok = injectSecrets({ path: '/v1/models', rawHeaders: ['Host', 'api.test', 'Authorization', `bearer ${a}`, 'x-api-key', b] }, lookup);
    assert.deepEqual(ok.rawHeaders, ['Host', 'api.test', 'Authorization', `bearer ${valueA}`, 'x-api-key', valueB]);
    assert.deepEqual([...ok.swapped].sort(), [a, b].sort());
    assert.equal(ok.misplaced.size, 0);

    const elsewhere = injectSecrets(
      {
        path: `/v1/${a}?key=${b}`,
        rawHeaders: [
          'Host',
          a,
          'Origin',
          `https://${a}.x`,
          'Referer',
          `https://x/?${a}`,
          'Cookie',
          `k=${a}`,
          'X-Api-Key',
          `Bearer ${b}`,
          'Authorization',
          `Bearer ${b}`,
          'X-Other',
          c,
        ],
      },
      lookup,
    );
    assert.equal(elsewhere.swapped.size, 0, 'nothing is swapped outside the injection points');
    assert.ok(!JSON.stringify(elsewhere.rawHeaders).includes('value-of'));
    assert.deepEqual(elsewhere.misplaced.get(a), ['the path', 'header Host', 'header Origin', 'header Referer', 'header Cookie']);
    assert.deepEqual(elsewhere.misplaced.get(b), ['the query', 'header X-Api-Key', 'header Authorization']);
    assert.deepEqual(elsewhere.misplaced.get(c), ['header X-Other']);

    // A second Authorization: neither is swapped (which one the server reads is its choice).
    const twice = injectSecrets({ path: '/', rawHeaders: ['Authorization', `Bearer ${a}`, 'authorization', `Bearer ${a}`] }, lookup);
    assert.equal(twice.swapped.size, 0);
    assert.deepEqual(twice.misplaced.get(a), ['header Authorization (sent 2 times)', 'header authorization (sent 2 times)']);
    // The prefix must be the whole rest of the value; GitHub's `token` scheme.
    const github = injectSecrets({ path: '/', rawHeaders: ['Authorization', `Token ${c}`] }, lookup);
    assert.deepEqual(github.rawHeaders, ['Authorization', `Token ${secrets.get(c)!.value}`]);
    const extra = injectSecrets({ path: '/', rawHeaders: ['X-Api-Key', `${b} ${b}`, 'Authorization', `Bearer ${a}x`] }, lookup);
    assert.equal(extra.swapped.size, 0);

    // Unknown placeholders (another session's) are neither swapped nor reported; unswappable ones are reported.
    const stranger = newVaultPlaceholder();
    as(b, { type: 'header', name: 'X-Api-Key', prefix: '' }, null);
    const unknown = injectSecrets({ path: `/${stranger}`, rawHeaders: ['Authorization', `Bearer ${stranger}`, 'X-Api-Key', b] }, lookup);
    assert.equal(unknown.swapped.size, 0);
    assert.deepEqual([...unknown.misplaced.keys()], [b]);
  });

  test('Basic credentials: the user or the password swapped when it is the placeholder of a basic secret', () => {
    const user = newVaultPlaceholder();
    const lookup = (placeholder: string): InjectableSecret | undefined =>
      placeholder === a
        ? { injection: { type: 'basic' }, value: 'the:secret' }
        : placeholder === user
          ? { injection: { type: 'basic' }, value: 'sk_user' }
          : placeholder === b
            ? { injection: { type: 'bearer' }, value: 'bearer-value' }
            : undefined;
    const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;
    const decoded = (headers: string[]) => Buffer.from(headers[1]!.slice('Basic '.length), 'base64').toString();

    const password = injectSecrets({ path: '/', rawHeaders: ['Authorization', basic(`me:${a}`)] }, lookup);
    assert.equal(decoded(password.rawHeaders), 'me:the:secret');
    const asUser = injectSecrets({ path: '/', rawHeaders: ['Authorization', basic(`${user}:`)] }, lookup);
    assert.equal(decoded(asUser.rawHeaders), 'sk_user:');
    // Part of a user, or a bearer secret inside Basic: not swapped, reported.
    const partial = injectSecrets({ path: '/', rawHeaders: ['Authorization', basic(`x${user}:${b}`)] }, lookup);
    assert.equal(decoded(partial.rawHeaders), `x${user}:${b}`);
    assert.deepEqual(partial.misplaced.get(user), ['header Authorization (Basic credentials)']);
    assert.deepEqual(partial.misplaced.get(b), ['header Authorization (Basic credentials)']);
    // Base64 in another header is not decoded.
    const other = injectSecrets({ path: '/', rawHeaders: ['X-Blob', basic(`me:${a}`)] }, lookup);
    assert.equal(other.swapped.size, 0);
  });
});
