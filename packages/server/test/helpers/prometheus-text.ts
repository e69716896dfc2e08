/**
 * Reads a Prometheus text exposition (format 0.0.4) strictly: every line must be a `# HELP`, a `# TYPE` or a sample
 * `name{label="value",...} number`, each sample must belong to a family declared by `# TYPE` (histogram samples by
 * their `_bucket`, `_sum` and `_count` suffixes), and a malformed line throws. Written here rather than taken from
 * npm: `parse-prometheus-text-format` (the one maintained parser) folds a labelled histogram's series into one and
 * drops their labels, sums and counts, which is what these tests read.
 */

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  help: string;
  samples: Sample[];
}

const METRIC_NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${METRIC_NAME})(?:\\{(.*)\\})? (\\S+)(?: -?\\d+)?$`);
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)/y;
const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const match = LABEL.exec(text);
    if (!match) throw new Error(`malformed labels: ${line}`);
    labels[match[1]!] = match[2]!.replace(/\\(["\\n])/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/** Prometheus reads values with Go's ParseFloat, which takes `NaN` and `Inf` in any case (prom-client writes `Nan`). */
function parseValue(text: string, line: string): number {
  const lower = text.toLowerCase();
  if (lower === '+inf' || lower === 'inf') return Infinity;
  if (lower === '-inf') return -Infinity;
  if (lower === 'nan') return Number.NaN;
  const value = Number(text);
  if (Number.isNaN(value)) throw new Error(`malformed value: ${line}`);
  return value;
}

/** The families of `text` by name. */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const familyOf = (sampleName: string): Family | undefined => {
    for (const family of families.values()) {
      const suffixes = SUFFIXES[family.type] ?? [''];
      if (suffixes.some((suffix) => family.name + suffix === sampleName)) return family;
    }
    return undefined;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta;
      if (!new RegExp(`^${METRIC_NAME}$`).test(name!)) throw new Error(`malformed metric name: ${line}`);
      const family = families.get(name!) ?? { name: name!, type: 'untyped' as const, help: '', samples: [] };
      if (kind === 'HELP') family.help = rest!;
      else if (['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(rest!)) family.type = rest as Family['type'];
      else throw new Error(`unknown type: ${line}`);
      families.set(name!, family);
      continue;
    }
    if (line.startsWith('#')) continue;
    const sample = SAMPLE.exec(line);
    if (!sample) throw new Error(`malformed sample: ${line}`);
    const family = familyOf(sample[1]!);
    if (!family) throw new Error(`a sample of no declared family: ${line}`);
    family.samples.push({ name: sample[1]!, labels: parseLabels(sample[2] ?? '', line), value: parseValue(sample[3]!, line) });
  }
  return families;
}

/** The samples of `family` named `name` whose labels include `labels`. */
export function samplesOf(family: Family | undefined, name: string, labels: Record<string, string> = {}): Sample[] {
  return (family?.samples ?? []).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
