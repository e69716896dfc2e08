// test-lane: light
/**
 * What keeps a VM awake (core/vms/activity.ts), on an agent stand-in: a call holds its VM busy until it settles
 * and marks it used; an attached terminal holds until it closes; a background process running on its own and a
 * usage read do not hold it. The auto-pause test (auto-pause.test.ts) shows the same on real VMs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VmActivity } from '../../src/core/vms/activity.ts';
import type { GuestAgent, PtyAttachment } from '../../src/core/vm-engine.ts';

test('a call holds its VM until it settles; a kept process and a usage read do not; a terminal holds until it closes', async () => {
  let now = 1_000_000;
  const activity = new VmActivity({ now: () => new Date(now) });
  let finish: () => void = () => {};
  let close: () => void = () => {};
  const closed = new Promise<void>((resolve) => (close = resolve));
  const typed: string[] = [];
  const agent = {
    exec: (request: { keep?: boolean }) => (request.keep ? new Promise(() => {}) : new Promise<void>((resolve) => (finish = resolve))),
    usage: () => Promise.resolve({}),
    attachPty: (): Promise<PtyAttachment> =>
      Promise.resolve({ write: (data: Buffer) => void typed.push(data.toString()), resize: () => {}, detach: () => {}, closed }),
  } as unknown as GuestAgent;
  const watched = activity.watch('vm-a', agent);

  await watched.usage();
  assert.equal(activity.lastUseOf('vm-a'), undefined, 'a usage read is not a use');

  const run = watched.exec({ command: 'sleep 1' } as never, {} as never);
  assert.equal(activity.isHeld('vm-a'), true, 'held while the execution runs');
  now += 60_000;
  finish();
  await run;
  assert.equal(activity.isHeld('vm-a'), false);
  assert.equal(activity.lastUseOf('vm-a'), now, 'its end is a use');

  now += 1000;
  void watched.exec({ command: 'server', keep: true } as never, {} as never);
  assert.equal(activity.isHeld('vm-a'), false, 'a background process does not hold the VM');
  assert.equal(activity.lastUseOf('vm-a'), now, 'starting it is a use');

  const attachment = await watched.attachPty('pty-1', {} as never);
  assert.equal(activity.isHeld('vm-a'), true, 'an attached terminal holds the VM');
  now += 5000;
  attachment.write(Buffer.from('ls\n'));
  assert.deepEqual(typed, ['ls\n']);
  assert.equal(activity.lastUseOf('vm-a'), now, 'typing is a use');
  close();
  await closed;
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(activity.isHeld('vm-a'), false, 'released when the terminal closes');

  activity.prune(() => false);
  assert.equal(activity.lastUseOf('vm-a'), now, 'a use not flushed yet is kept');
  activity.forget('vm-a');
  assert.equal(activity.lastUseOf('vm-a'), undefined);
});
