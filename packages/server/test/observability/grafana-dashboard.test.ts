// test-lane: light (a JSON file and a fresh metrics registry: no server, no VM)
/**
 * docs/grafana/sandboxd-dashboard.json cannot rot: it is a Grafana dashboard of a supported schema whose panels read
 * the `${DS_PROMETHEUS}` data source variable, and every metric its queries name is one the server registers, with
 * the labels it groups or filters by (read from a fresh `Metrics` registry's exposition, not from a list here).
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Metrics } from '../../src/observability/metrics.ts';

const FILE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../docs/grafana/sandboxd-dashboard.json');

interface Panel {
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  targets?: { expr: string; datasource?: { uid: string } }[];
}

/** The series the server exposes, by name, with the labels each may carry (a histogram's three series, `le` on its buckets). */
async function registeredSeries(): Promise<Map<string, Set<string>>> {
  const metrics = new Metrics({ vmsByStatus: async () => [], poolCounts: () => ({}), webhookQueueDepth: async () => 0 }, () => {});
  // Labels are read from the metrics' own declarations (the exposition shows only label sets that were observed).
  const declared = (
    metrics as unknown as { registry: { getMetricsAsArray(): { name: string; labelNames?: readonly string[] }[] } }
  ).registry.getMetricsAsArray();
  const text = (await metrics.render()).body;
  const series = new Map<string, Set<string>>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    const labels = new Set(['instance', 'job', ...(declared.find((m) => m.name === name)?.labelNames ?? [])]);
    if (type === 'histogram') {
      series.set(`${name}_bucket`, new Set([...labels, 'le']));
      series.set(`${name}_sum`, labels);
      series.set(`${name}_count`, labels);
    } else series.set(name!, labels);
  }
  return series;
}

test('the Grafana dashboard queries only metrics and labels the server registers', async () => {
  const dashboard = JSON.parse(fs.readFileSync(FILE, 'utf8')) as {
    schemaVersion: number;
    panels: Panel[];
    templating: { list: { name: string; type: string; query: unknown; definition?: string }[] };
  };
  assert.ok(dashboard.schemaVersion >= 36, `schemaVersion ${dashboard.schemaVersion}`);
  const source = dashboard.templating.list.find((variable) => variable.name === 'DS_PROMETHEUS');
  assert.deepEqual([source?.type, source?.query], ['datasource', 'prometheus'], 'a Prometheus data source variable DS_PROMETHEUS');

  const series = await registeredSeries();
  const queries = dashboard.panels.filter((panel) => panel.type !== 'row');
  assert.ok(queries.length >= 15, `${queries.length} panels`);
  const exprs = [
    ...queries.flatMap((panel) => {
      assert.equal(panel.datasource?.uid, '${DS_PROMETHEUS}', `${panel.title} reads the DS_PROMETHEUS variable`);
      assert.ok(panel.targets && panel.targets.length > 0, `${panel.title} has queries`);
      return panel.targets.map((target) => ({ where: panel.title, expr: target.expr }));
    }),
    ...dashboard.templating.list.flatMap((variable) => (variable.definition ? [{ where: `variable ${variable.name}`, expr: variable.definition }] : [])),
  ];
  const problems: string[] = [];
  for (const { where, expr } of exprs) {
    const names = [...expr.matchAll(/\b(sandboxd_[a-z0-9_]+)\b/g)].map((match) => match[1]!);
    if (names.length === 0) problems.push(`${where}: no sandboxd metric in ${expr}`);
    for (const name of names) {
      const labels = series.get(name);
      if (!labels) {
        problems.push(`${where}: ${name} is not registered`);
        continue;
      }
      // Labels grouped by (`by (…)`) or matched (`{label=…}`) must be the metric's own (or Prometheus's target labels).
      const used = [
        ...[...expr.matchAll(/\bby \(([^)]*)\)/g)].flatMap((match) => match[1]!.split(',').map((label) => label.trim())),
        ...[...expr.matchAll(new RegExp(`${name}\\{([^}]*)\\}`, 'g'))].flatMap((match) => [...match[1]!.matchAll(/(\w+)\s*[=!]~?/g)].map((m) => m[1]!)),
      ];
      for (const label of used) if (!labels.has(label)) problems.push(`${where}: ${name} has no label ${label}`);
    }
  }
  assert.deepEqual(problems, []);
});
