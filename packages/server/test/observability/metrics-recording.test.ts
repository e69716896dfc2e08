// test-lane: light (the metrics registry alone: no server, no VM)
/**
 * The recorders run inside the work they count (an execution's end, a response): a value prom-client would refuse
 * must be skipped, never thrown into that work, and what is recorded must come out in the exposition.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metrics } from '../../src/observability/metrics.ts';
import { parsePrometheusText, samplesOf } from '../helpers/prometheus-text.ts';

test('a run without an end time is skipped, not thrown; a run with one is observed in seconds', async () => {
  const failures: string[] = [];
  const metrics = new Metrics({ vmsByStatus: async () => [], poolCounts: () => ({ '2:512': 1 }), webhookQueueDepth: async () => 0 }, (metric) =>
    failures.push(metric),
  );
  assert.doesNotThrow(() => metrics.recordExecution('python', 'failed', '2026-11-27T10:00:00.000Z', null));
  assert.doesNotThrow(() => metrics.recordAcquire(true, Number.NaN));
  metrics.recordExecution('python', 'completed', '2026-11-27T10:00:00.000Z', '2026-11-27T10:00:02.500Z');

  const families = parsePrometheusText((await metrics.render()).body);
  const executes = families.get('sandboxd_execute_duration_seconds');
  assert.deepEqual(
    samplesOf(executes, 'sandboxd_execute_duration_seconds_count').map((s) => [s.labels.status, s.value]),
    [['completed', 1]],
  );
  assert.deepEqual(
    samplesOf(executes, 'sandboxd_execute_duration_seconds_sum').map((s) => s.value),
    [2.5],
  );
  assert.deepEqual(samplesOf(families.get('sandboxd_vm_acquire_duration_seconds'), 'sandboxd_vm_acquire_duration_seconds_count'), []);
  assert.deepEqual(
    samplesOf(families.get('sandboxd_pool_idle_vms'), 'sandboxd_pool_idle_vms', { variant: '2:512' }).map((s) => s.value),
    [1],
  );
  assert.deepEqual(failures, []);
});

test('a gauge whose source fails is left out of that scrape and reported', async () => {
  const failures: string[] = [];
  const metrics = new Metrics(
    { vmsByStatus: async () => Promise.reject(new Error('store down')), poolCounts: () => ({}), webhookQueueDepth: async () => 3 },
    (metric) => failures.push(metric),
  );
  const families = parsePrometheusText((await metrics.render()).body);
  assert.deepEqual(families.get('sandboxd_vms')?.samples, []);
  assert.deepEqual(
    samplesOf(families.get('sandboxd_webhook_queue_depth'), 'sandboxd_webhook_queue_depth').map((s) => s.value),
    [3],
  );
  assert.deepEqual(failures, ['sandboxd_vms']);
});

test('store statements are counted by verb, never by their text; agent calls by call and outcome', async () => {
  const metrics = new Metrics({ vmsByStatus: async () => [], poolCounts: () => ({}), webhookQueueDepth: async () => 0 }, () => {});
  metrics.recordStoreQuery('select', 2);
  metrics.recordStoreQuery('select', 1);
  metrics.recordStoreQuery('insert', 4);
  metrics.recordStoreQuery('pragma', 0.5);
  metrics.recordAgentCall('exec', 0.25, true);
  metrics.recordAgentCall('write_file', 0.5, false);

  const families = parsePrometheusText((await metrics.render()).body);
  const store = families.get('sandboxd_store_query_duration_seconds');
  assert.deepEqual(
    samplesOf(store, 'sandboxd_store_query_duration_seconds_count')
      .map((s) => [s.labels.verb, s.value])
      .sort(),
    [
      ['insert', 1],
      ['other', 1],
      ['select', 2],
    ],
  );
  assert.deepEqual(
    samplesOf(store, 'sandboxd_store_query_duration_seconds_sum', { verb: 'select' }).map((s) => s.value),
    [0.003],
  );
  const agent = families.get('sandboxd_agent_call_duration_seconds');
  assert.deepEqual(
    samplesOf(agent, 'sandboxd_agent_call_duration_seconds_count')
      .map((s) => [s.labels.call, s.labels.outcome, s.value])
      .sort(),
    [
      ['exec', 'ok', 1],
      ['write_file', 'error', 1],
    ],
  );
});
