/**
 * A short soak in `npm test` (the long one is `npm run soak`: 1,000 cycles, two kills): 12 create → execute → upload → terminal → kill
 * cycles against a real server process with real VMs, the server SIGKILLed once mid-load and started again,
 * then stopped gracefully (12: the kill lands after 6 cycles started, with cycles before and after it; 30 took 65 s
 * of the suite and guarded nothing more); nothing may be left behind and every failure must be explained by the kill.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runSoak } from './soak-runner.ts';

test(
  '12 cycles with a SIGKILL of the server mid-load leave no process, file, mount, cgroup, live VM or open execution behind',
  { timeout: 20 * 60_000 },
  async () => {
    const report = await runSoak({ cycles: 12, kills: 1, concurrency: 2, log: (m) => process.stderr.write(`[soak] ${m}\n`) });
    assert.deepEqual(report.failures, [], 'every failed cycle overlapped the kill');
    assert.equal(report.kills, 1);
    // The kill cuts off at most the cycles in flight; the rest completed.
    assert.ok(report.completedCycles >= report.cycles - 2 * 2, `completed ${report.completedCycles} of ${report.cycles}`);
    assert.deepEqual(report.leftovers, {
      qemuProcesses: [],
      runDirectories: [],
      mounts: [],
      cgroups: [],
      liveVms: [],
      unfinishedExecutions: [],
      missingExecutions: [],
    });
  },
);
