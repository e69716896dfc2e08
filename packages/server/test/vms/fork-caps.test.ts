// test-lane: light
/**
 * The plans' fork caps (issue 38): the built-in plans' `maxForkCount` (free 10, pro and enterprise 100), a plan given
 * without one keeps its built-in namesake's or free's, one over MAX_FORK_COUNT is refused at start, and the fork's
 * concurrency setting defaults from the host's cores.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/index.ts';
import { forkCapOf, MAX_FORK_COUNT } from '../../src/core/plans.ts';
import { MAX_CLONES } from '../../src/core/snapshots.ts';

test('built-in plans cap one fork at free 10, pro and enterprise 100; 100 is the most any request makes', () => {
  const { plans } = loadConfig({}).auth;
  assert.deepEqual([plans.free?.maxForkCount, plans.pro?.maxForkCount, plans.enterprise?.maxForkCount], [10, 100, 100]);
  assert.equal(MAX_CLONES, 100);
  assert.equal(MAX_FORK_COUNT, 100);
});

test("a plan given without maxForkCount keeps its built-in namesake's, else free's; one given is kept", () => {
  const { plans } = loadConfig({
    SANDBOXD_PLANS: JSON.stringify({
      team: { executionsPerMinute: 5, maxConcurrentVms: 1, maxTotalVcpus: 2 },
      pro: { executionsPerMinute: 5, maxConcurrentVms: 1, maxTotalVcpus: 2 },
      swarm: { executionsPerMinute: 5, maxConcurrentVms: 50, maxTotalVcpus: 50, maxForkCount: 50 },
    }),
  }).auth;
  assert.deepEqual([plans.team?.maxForkCount, plans.pro?.maxForkCount, plans.swarm?.maxForkCount], [10, 100, 50]);
  // A plan handed over as it is (not through SANDBOXD_PLANS) without the field: the same rule at use.
  const bare = { executionsPerMinute: 1, maxConcurrentVms: 1, maxTotalVcpus: 1, diskMb: 1024, maxBrowserSessions: 0, pausedRetentionSeconds: 60 };
  assert.deepEqual([forkCapOf('pro', bare), forkCapOf('tiny', bare), forkCapOf('tiny', { ...bare, maxForkCount: 3 })], [100, 10, 3]);
});

test('a fork cap over 100 or under 1 fails at start, naming SANDBOXD_PLANS', () => {
  for (const maxForkCount of [0, 101]) {
    const plans = JSON.stringify({ x: { executionsPerMinute: 1, maxConcurrentVms: 1, maxTotalVcpus: 1, maxForkCount } });
    assert.throws(() => loadConfig({ SANDBOXD_PLANS: plans }), /SANDBOXD_PLANS/);
  }
});

test("clones start twice the host's cores at a time unless SANDBOXD_FORK_CONCURRENCY says otherwise", () => {
  assert.equal(loadConfig({}).vm.forkConcurrency, 2 * os.availableParallelism());
  assert.equal(loadConfig({ SANDBOXD_FORK_CONCURRENCY: '3' }).vm.forkConcurrency, 3);
  assert.throws(() => loadConfig({ SANDBOXD_FORK_CONCURRENCY: '0' }), /SANDBOXD_FORK_CONCURRENCY/);
});
