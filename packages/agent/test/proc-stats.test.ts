import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseMeminfo, parseProcStat } from '../src/system/proc-stats.ts';

describe('/proc parsers', () => {
  it('sums busy CPU time over all CPUs in seconds', () => {
    const stat = 'cpu  100 20 30 400 5 6 7 8 0 0\ncpu0 50 10 15 200 2 3 3 4 0 0\ncpu1 50 10 15 200 3 3 4 4 0 0\nintr 1\n';
    assert.deepEqual(parseProcStat(stat), { busySeconds: 1.71, userSeconds: 1.2, systemSeconds: 0.3, idleSeconds: 4, count: 2 });
  });

  it('reads memory in bytes', () => {
    const meminfo = 'MemTotal:        1000 kB\nMemFree:          100 kB\nMemAvailable:     600 kB\n';
    assert.deepEqual(parseMeminfo(meminfo), { totalBytes: 1_024_000, availableBytes: 614_400, usedBytes: 409_600 });
  });
});
