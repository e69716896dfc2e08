// test-lane: light (timers and a metrics registry: no server, no VM)
/**
 * A background loop's failed turn is not swallowed: `BackgroundTimers` reports it to the app's `BackgroundFailures`
 * under the loop's name (app-workers.ts logs it and counts it), the loop keeps running, and the count comes out in
 * the exposition as `sandboxd_background_failures_total{loop=…}`; egress decisions are counted by action.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BackgroundFailures, BackgroundTimers } from '../../src/core/background-timers.ts';
import { Metrics } from '../../src/observability/metrics.ts';
import { parsePrometheusText, samplesOf } from '../helpers/prometheus-text.ts';

test('a failing loop is reported by name on every failed turn, keeps running, and is counted', async () => {
  const metrics = new Metrics({ vmsByStatus: async () => [], poolCounts: () => ({}), webhookQueueDepth: async () => 0 }, () => {});
  const failures = new BackgroundFailures();
  const heard: [string, string][] = [];
  failures.on((loop, error) => {
    heard.push([loop, (error as Error).message]);
    metrics.recordBackgroundFailure(loop);
  });
  const timers = new BackgroundTimers(failures);
  let turns = 0;
  timers.every('egress_log_write', 10, async () => {
    turns += 1;
    if (turns <= 2) throw new Error('the store refused the batch');
  });
  timers.every('browser_sweep', 10, async () => undefined);
  while (turns < 4) await sleep(10);
  timers.clear();
  assert.deepEqual(heard, [
    ['egress_log_write', 'the store refused the batch'],
    ['egress_log_write', 'the store refused the batch'],
  ]);
  metrics.recordEgressDecision('allow');
  metrics.recordEgressDecision('deny');
  metrics.recordEgressDecision('deny');

  const families = parsePrometheusText((await metrics.render()).body);
  assert.deepEqual(
    samplesOf(families.get('sandboxd_background_failures_total'), 'sandboxd_background_failures_total').map((s) => [s.labels.loop, s.value]),
    [['egress_log_write', 2]],
  );
  assert.deepEqual(
    samplesOf(families.get('sandboxd_egress_decisions_total'), 'sandboxd_egress_decisions_total')
      .map((s) => [s.labels.action, s.value])
      .sort(),
    [
      ['allow', 1],
      ['deny', 2],
    ],
  );
});
