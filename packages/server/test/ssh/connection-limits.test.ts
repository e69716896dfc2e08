/** The SSH gateway's connection accounting (no server): sources as counted, and the caps overall and per source. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { connectionSource, ConnectionCounter } from '../../src/ssh/connection-limits.ts';

test('a connection counts under its IPv4 address (mapped or not) or its IPv6 /64', () => {
  assert.equal(connectionSource('192.0.2.7'), '192.0.2.7');
  assert.equal(connectionSource('::ffff:192.0.2.7'), '192.0.2.7');
  assert.equal(connectionSource('2001:db8:1:2:aaaa::1'), '2001:db8:1:2::/64');
  assert.equal(connectionSource('2001:db8:1:2:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(connectionSource('2001:0db8:0001:0002::5%eth0'), '2001:db8:1:2::/64');
  assert.equal(connectionSource('::1'), '0:0:0:0::/64');
  assert.equal(connectionSource(undefined), 'unknown');
});

test('connections are admitted while both the overall and the per-source caps hold, and released', () => {
  const counter = new ConnectionCounter({ maxConnections: 3, maxConnectionsPerSource: 2 });
  assert.equal(counter.admit('a'), null);
  assert.equal(counter.admit('a'), null);
  assert.match(counter.admit('a') ?? '', /a holds 2 connections, the limit per source/);
  assert.equal(counter.admit('b'), null);
  assert.match(counter.admit('c') ?? '', /holds 3 connections, its limit/);
  counter.release('a');
  assert.equal(counter.size, 2);
  assert.equal(counter.admit('c'), null);
  for (const source of ['a', 'b', 'c']) counter.release(source);
  assert.equal(counter.size, 0);
  assert.equal(counter.admit('a'), null);
});
