/**
 * The desktop viewer page's parameters (src/viewer/viewer-params.ts): the VNC token comes from the fragment,
 * the relay's address from the page's own path (so a link cannot point the viewer at another WebSocket).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { viewerParams } from '../src/viewer/viewer-params.ts';

const ID = '0b5e6c1e-7a53-4b43-9a3c-6d2f0e4f4b11';

test('the viewer reads its token from the fragment and its relay from its own path', () => {
  assert.deepEqual(viewerParams({ protocol: 'http:', host: '127.0.0.1:8080', pathname: `/v1/app/${ID}/6080/vnc.html`, hash: '#token=a.b-c&view_only=true' }), {
    websocketUrl: `ws://127.0.0.1:8080/v1/computeruse/${ID}/vnc/websockify?token=a.b-c`,
    viewOnly: true,
  });
  // Behind a proxy at a base path, over TLS.
  assert.deepEqual(viewerParams({ protocol: 'https:', host: 'sbx.example.com', pathname: `/base/v1/app/${ID}/6080/vnc.html`, hash: '#token=t' }), {
    websocketUrl: `wss://sbx.example.com/base/v1/computeruse/${ID}/vnc/websockify?token=t`,
    viewOnly: false,
  });
  assert.equal(viewerParams({ protocol: 'http:', host: 'h', pathname: `/v1/app/${ID}/6080/vnc.html`, hash: '' }), null, 'no token');
  assert.equal(viewerParams({ protocol: 'http:', host: 'h', pathname: '/elsewhere', hash: '#token=t' }), null, 'not a viewer path');
});
