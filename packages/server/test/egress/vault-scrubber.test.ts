/** The vault's answer scrubber without a VM: every form of a value is masked, in text and in a stream cut anywhere. */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { describe, test } from 'node:test';
import { ResponseScrubber, secretForms } from '../../src/core/vault/response-scrubber.ts';
import { secretLeaks } from '../helpers/secret-leaks.ts';

const SECRET = 'sk-live/7Hq2+vault é"test value';

/** Every way an echoing server is likely to write SECRET. */
function echoes(value: string): string[] {
  const json = JSON.stringify(value).slice(1, -1);
  return [
    value,
    encodeURIComponent(value),
    encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    new URLSearchParams({ v: value }).toString().slice(2),
    json,
    json.replace(/\//g, '\\/'),
    json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
    Buffer.from(value).toString('hex'),
    Buffer.from(value).toString('base64'),
    Buffer.from(value).toString('base64url'),
    // Inside larger base64 blobs, at each alignment: echoed Basic credentials.
    ...['u', 'us', 'use', 'user'].map((user) => Buffer.from(`${user}:${value}`).toString('base64')),
    ...['', 'x', 'xy'].map((pad) => Buffer.from(`{"k":"${pad}${value}","n":1}`).toString('base64url')),
  ];
}

function leaks(output: string, value: string): boolean {
  return secretLeaks(output, value).length > 0;
}

async function throughStream(scrubber: ResponseScrubber, input: Buffer, size: number): Promise<string> {
  const chunks: Buffer[] = [];
  for (let at = 0; at < input.length; at += size) chunks.push(input.subarray(at, at + size));
  return text(Readable.from(chunks).pipe(scrubber.stream()));
}

describe('vault answer scrubber', () => {
  const scrubber = new ResponseScrubber([SECRET, 'second-secret-0123']);

  test('every echoed form is masked in a header value, with the same length', () => {
    for (const echo of echoes(SECRET)) {
      const header = `prefix ${echo} suffix`;
      const masked = scrubber.text(Buffer.from(header).toString('latin1'));
      assert.equal(Buffer.from(masked, 'latin1').length, Buffer.byteLength(header), echo);
      assert.ok(!leaks(Buffer.from(masked, 'latin1').toString('utf8'), SECRET), `${echo} → ${masked}`);
    }
    assert.ok(
      echoes(SECRET).every((echo) => leaks(`x ${echo} y`, SECRET)),
      'the check finds each form unmasked',
    );
    assert.equal(scrubber.text('nothing here'), 'nothing here');
    assert.ok(secretForms('abc').length >= 1, 'a short value is still masked as it is');
  });

  test('a stream cut at every size gives what a whole scan gives, and nothing leaks', async () => {
    const body = Buffer.from(
      echoes(SECRET)
        .map((echo, i) => `line ${i}: ${echo}\n`)
        .join('') + 'second-secret-0123 end',
    );
    const whole = scrubber.text(body.toString('latin1'));
    for (const size of [1, 2, 3, 5, 7, 13, 31, 64, 1000]) {
      const streamed = await throughStream(scrubber, body, size);
      assert.equal(Buffer.from(streamed).length, body.length, `size ${size}`);
      assert.ok(!leaks(streamed, SECRET) && !streamed.includes('second-secret-0123'), `size ${size}`);
      assert.equal(Buffer.from(streamed).toString('latin1'), whole, `size ${size}`);
    }
  });

  test("a header that carried a secret upstream is masked in its base64 forms: a whole Basic header echoed base64'd", () => {
    const header = `Basic ${Buffer.from(`svc:${SECRET}`).toString('base64')}`;
    const echo = Buffer.from(header).toString('base64');
    assert.ok(leaks(echo, SECRET), 'base64 twice gives it away');
    assert.ok(!scrubber.text(echo).includes('*'), 'the value alone does not find it');
    const withCarrier = new ResponseScrubber([SECRET], [header]);
    assert.ok(!leaks(withCarrier.text(`x-auth-b64: ${echo}`), SECRET));
    assert.equal(withCarrier.text(`Authorization: ${header}`).startsWith('Authorization: Basic '), true, 'the header itself is masked as the value only');
  });

  test('a chunk that cannot begin a form is passed on at once (an event stream is not delayed)', async () => {
    const stream = scrubber.stream();
    const out: string[] = [];
    stream.on('data', (chunk: Buffer) => out.push(chunk.toString()));
    stream.write('data: {"token":"hello"}\n\n');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(out, ['data: {"token":"hello"}\n\n']);
    // The start of a value is held back until the next chunk tells whether it is the value.
    stream.write('data: sk-li');
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(out.slice(1), ['data: ']);
    stream.end('ve/ and more\n');
    await new Promise((resolve) => stream.once('end', resolve));
    assert.equal(out.slice(1).join(''), 'data: sk-live/ and more\n');
  });
});
