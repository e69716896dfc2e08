/**
 * The preview proxy's header rules, without a VM: what of a request reaches the app (no sandboxd cookie, key,
 * CSRF or internal header, no Authorization that carries a sandboxd credential, whatever the grant; the app's
 * own cookies and Authorization unchanged), what of an app's answer reaches the browser on the console's
 * origin and on the app's own, and what the request log keeps of a URL.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import { describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { looksLikeSandboxdCredential } from '../../src/core/auth/credential-shape.ts';
import { forwardedHeaders } from '../../src/api/preview/preview-request.ts';
import { allowedResponseHeader, filterResponseHead, hostOnlyCookie } from '../../src/api/preview/response-headers.ts';
import { isSandboxdAuthorization, withoutSandboxdCookies } from '../../src/api/preview/sandboxd-credentials.ts';
import { redactUrl } from '../../src/api/request-logging.ts';
import { ORIGIN_STATE_HEADERS } from '../helpers/state-headers.ts';

const KEY = 'sbx_sk_' + 'A'.repeat(43);
const jwt = (issuer: string) =>
  new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setIssuer(issuer).setSubject('1').sign(new TextEncoder().encode('a-secret-of-some-length'));
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A request as forwardedHeaders reads it (raw header pairs). */
function requestWith(raw: string[]): IncomingMessage {
  const headers: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) headers[raw[i]!.toLowerCase()] = raw[i + 1]!;
  return { rawHeaders: raw, headers } as unknown as IncomingMessage;
}

describe('what a preview request forwards to the app', () => {
  test('sandboxd credentials are recognized by shape', async () => {
    assert.ok(looksLikeSandboxdCredential(KEY));
    assert.ok(looksLikeSandboxdCredential(await jwt('sandboxd')));
    assert.ok(!looksLikeSandboxdCredential(await jwt('https://accounts.example.com')));
    assert.ok(!looksLikeSandboxdCredential('app-token'));
    assert.ok(!looksLikeSandboxdCredential('a.b.c'));
  });

  test('Authorization: sandboxd keys and tokens in any scheme are ours; the app’s own are not', async () => {
    assert.ok(isSandboxdAuthorization(`Bearer ${KEY}`));
    assert.ok(isSandboxdAuthorization(`bearer   ${await jwt('sandboxd')}`));
    assert.ok(isSandboxdAuthorization(`Token ${KEY}`));
    assert.ok(isSandboxdAuthorization(basic(KEY, '')));
    assert.ok(isSandboxdAuthorization(basic('me', KEY)));
    assert.ok(isSandboxdAuthorization(basic('me', await jwt('sandboxd'))));
    assert.ok(!isSandboxdAuthorization(basic('alice', 'wonderland')));
    assert.ok(!isSandboxdAuthorization('Bearer app-token'));
    assert.ok(!isSandboxdAuthorization(`Bearer ${await jwt('https://accounts.example.com')}`));
  });

  test('Cookie: every sandboxd cookie is taken out, the app’s pass byte for byte', () => {
    assert.equal(
      withoutSandboxdCookies('app=1; sandboxd_session=s; b="x y";  __Host-sandboxd_csrf=c;__Secure-sandboxd_x=1; sandboxd_preview=p'),
      'app=1; b="x y"',
    );
    assert.equal(withoutSandboxdCookies('sandboxd_session=s; SANDBOXD_CSRF=c'), '');
    assert.equal(withoutSandboxdCookies('theme=dark;lang=en'), 'theme=dark;lang=en');
  });

  test('forwardedHeaders drops every sandboxd header and keeps the rest in order', async () => {
    const token = await jwt('sandboxd');
    const out = forwardedHeaders(
      requestWith([
        'Host',
        'example.test',
        'X-API-Key',
        KEY,
        'Authorization',
        `Bearer ${token}`,
        'Authorization',
        basic('alice', 'wonderland'),
        'Cookie',
        'sandboxd_session=s; app=1',
        'Cookie',
        'sandboxd_csrf=c',
        'X-CSRF-Token',
        'c',
        'X-Sandboxd-Node',
        'n1',
        'x-sandboxd-signature',
        'sig',
        'X-Forwarded-For',
        '6.6.6.6',
        'Accept',
        'text/html',
      ]),
      { remoteAddress: '10.0.0.1', protocol: 'http', prefix: '/v1/app/s/8000', upgrade: false },
    );
    assert.deepEqual(out, [
      ['Host', 'example.test'],
      ['Authorization', basic('alice', 'wonderland')],
      ['Cookie', 'app=1'],
      ['Accept', 'text/html'],
      ['X-Forwarded-For', '6.6.6.6, 10.0.0.1'],
      ['X-Forwarded-Proto', 'http'],
      ['X-Forwarded-Host', 'example.test'],
      ['X-Forwarded-Prefix', '/v1/app/s/8000'],
    ]);
  });
});

describe("what of an app's answer reaches the browser", () => {
  test("on the console's origin no header leaves state in the browser", () => {
    for (const name of ORIGIN_STATE_HEADERS) {
      assert.equal(allowedResponseHeader(name, 'x', 'shared'), null, name);
    }
    assert.equal(allowedResponseHeader('content-type', 'text/html', 'shared'), 'text/html');
    assert.equal(allowedResponseHeader('location', '/next', 'shared'), '/next');
  });

  test('on its own origin an app keeps its cookies, host-only', () => {
    assert.deepEqual(allowedResponseHeader('set-cookie', ['a=1; Domain=example.com; Path=/', 'b=2; domain =.example.com', 'c=3'], 'own'), [
      'a=1; Path=/',
      'b=2',
      'c=3',
    ]);
    assert.equal(hostOnlyCookie('x=Domain=1; Secure; DOMAIN=apps.example.com; HttpOnly'), 'x=Domain=1; Secure; HttpOnly');
    assert.equal(allowedResponseHeader('clear-site-data', '"cookies"', 'own'), '"cookies"');
  });

  test('a WebSocket answer head is filtered the same way', () => {
    const head = [
      'HTTP/1.1 101 Switching Protocols',
      'Upgrade: websocket',
      'Set-Cookie: sandboxd_session=evil; Path=/v1/vaults',
      'Clear-Site-Data: "cookies"',
      ' "storage"',
      'Sec-WebSocket-Accept: abc',
    ].join('\r\n');
    assert.equal(filterResponseHead(head, 'shared'), ['HTTP/1.1 101 Switching Protocols', 'Upgrade: websocket', 'Sec-WebSocket-Accept: abc'].join('\r\n'));
    assert.equal(filterResponseHead('HTTP/1.1 101 OK\r\nset-cookie: a=1; Domain=example.com', 'own'), 'HTTP/1.1 101 OK\r\nset-cookie: a=1');
  });
});

describe('the request log', () => {
  test('redactUrl masks credential parameters and credentials nested in other values', async () => {
    const token = await jwt('sandboxd');
    assert.equal(redactUrl('/a?token=t&x=1'), '/a?token=***&x=1');
    // The old desktop viewer link: its VNC token inside noVNC's `path` parameter (finding L-9).
    const viewer = `/v1/app/s/6080/vnc.html?sandboxd_token=${token}&autoconnect=true&path=${encodeURIComponent('v1/computeruse/s/vnc/websockify?token=vnc-secret')}`;
    const logged = redactUrl(viewer);
    assert.doesNotMatch(logged, /vnc-secret/);
    assert.doesNotMatch(logged, new RegExp(token.split('.')[2]!));
    assert.match(logged, /autoconnect=true/);
    assert.doesNotMatch(redactUrl(`/a?next=${encodeURIComponent(`/b?x=1&api_key=${KEY}`)}`), /sbx_sk_A/);
    assert.equal(redactUrl(`/a?q=${KEY}`), '/a?q=***');
    assert.equal(redactUrl(`/a?q=Bearer+${token}`), '/a?q=Bearer+***');
    assert.equal(redactUrl('/a?monkey=1&keyword=2&q=a.b.c'), '/a?monkey=1&keyword=2&q=a.b.c');
    assert.equal(redactUrl('/plain/path'), '/plain/path');
  });
});
