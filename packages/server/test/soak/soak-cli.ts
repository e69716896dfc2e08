/**
 * `npm run soak`: the long soak (default 1,000 cycles, two SIGKILLs of the server, three cycles in flight).
 * SOAK_CYCLES, SOAK_KILLS and SOAK_CONCURRENCY change them. Prints progress on stderr and the report as JSON;
 * exits 1 when anything was left behind or a cycle failed for a reason other than a kill.
 */
import { runSoak } from './soak-runner.ts';

const number = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
};

const report = await runSoak({
  cycles: number('SOAK_CYCLES', 1000),
  kills: number('SOAK_KILLS', 2),
  concurrency: Math.max(1, number('SOAK_CONCURRENCY', 3)),
  log: (message) => process.stderr.write(`[soak] ${message}\n`),
});
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
const left = Object.values(report.leftovers).reduce((sum, list) => sum + list.length, 0);
process.exit(left === 0 && report.failures.length === 0 ? 0 : 1);
