/** Looking up the guest's accounts for `user` in exec requests (`exec/guest-users.ts`), from a passwd file of the test's. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { findGuestUser, userEnvironment } from '../src/exec/guest-users.ts';

const dir = mkdtempSync(join(tmpdir(), 'guest-users-'));
const passwd = join(dir, 'passwd');
writeFileSync(
  passwd,
  [
    'root:x:0:0:root:/root:/bin/bash',
    'daemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin',
    'user:x:1000:1000::/home/user:/bin/bash',
    'broken:x:abc:1::/:/bin/sh',
    '',
  ].join('\n'),
);
after(() => rmSync(dir, { recursive: true, force: true }));

test('an account is found by name with its ids and home', async () => {
  assert.deepEqual(await findGuestUser('user', passwd), { name: 'user', uid: 1000, gid: 1000, home: '/home/user' });
  assert.deepEqual(await findGuestUser('root', passwd), { name: 'root', uid: 0, gid: 0, home: '/root' });
});

test('unknown names, names no account may have, broken lines and a missing file are null', async () => {
  assert.equal(await findGuestUser('nobody-here', passwd), null);
  assert.equal(await findGuestUser('broken', passwd), null);
  assert.equal(await findGuestUser('us', passwd), null, 'a prefix is not a match');
  for (const bad of ['', 'User', '../root', 'root:x', 'a b', 'x'.repeat(40)]) assert.equal(await findGuestUser(bad, passwd), null, bad);
  assert.equal(await findGuestUser('user', join(dir, 'missing')), null);
});

test("the environment of a user's program has its HOME, USER and LOGNAME, whatever the request set", () => {
  const env = userEnvironment({ name: 'user', uid: 1000, gid: 1000, home: '/home/user' }, { HOME: '/root', USER: 'root', PATH: '/bin', GREETING: 'hi' });
  assert.deepEqual(env, { HOME: '/home/user', USER: 'user', LOGNAME: 'user', PATH: '/bin', GREETING: 'hi' });
});
