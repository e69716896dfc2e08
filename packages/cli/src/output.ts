/**
 * Printing: JSON for scripts (`--json`), text for people, and on stderr a spinner (only on a terminal) and progress
 * bars (progress.ts: on a terminal, or wherever `--progress` asks for them).
 */
import { byteProgress, progressMode, stepProgress, type ByteProgress, type ProgressMode, type StepProgress } from './progress.ts';

export interface Output {
  json: boolean;
  /** A result: JSON on stdout with --json, else the text. */
  result(value: unknown, text: () => string): void;
  /** A message for people (stderr, so stdout stays clean for the result). */
  info(message: string): void;
  spinner(message: string): Spinner;
  /** How progress is shown (`--progress`, `--no-progress`, else by whether stderr is a terminal). */
  progress: ProgressMode;
  /** A transfer's progress bar (`totalBytes` undefined: the size is not known). */
  bytes(name: string, totalBytes: number | undefined): ByteProgress;
  /** A template build's progress line, its log printed above it. */
  steps(name: string): StepProgress;
}

export interface Spinner {
  update(message: string): void;
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const NO_SPINNER: Spinner = { update: () => {}, stop: () => {} };

/** `progressFlag`: true for `--progress`, false for `--no-progress` (which silences the spinner too), else undefined. */
export function createOutput(json: boolean, progressFlag?: boolean): Output {
  const progress = progressMode(progressFlag, json, process.stderr.isTTY === true);
  return {
    json,
    progress,
    bytes: (name, totalBytes) => byteProgress(name, totalBytes, { mode: progress }),
    steps: (name) => stepProgress(name, { mode: progress }),
    result(value, text) {
      const rendered = json ? JSON.stringify(value, null, 2) : text();
      if (rendered !== '') process.stdout.write(rendered.endsWith('\n') ? rendered : `${rendered}\n`);
    },
    info(message) {
      process.stderr.write(`${message}\n`);
    },
    spinner(message) {
      if (!process.stderr.isTTY || json || progressFlag === false) return NO_SPINNER;
      let text = message;
      let frame = 0;
      const draw = () => process.stderr.write(`\r\x1b[2K${FRAMES[frame++ % FRAMES.length]} ${text}`);
      draw();
      const timer = setInterval(draw, 80);
      return {
        update(next) {
          text = next;
        },
        stop() {
          clearInterval(timer);
          process.stderr.write('\r\x1b[2K');
        },
      };
    },
  };
}

/** A plain text table: columns padded to their widest cell. */
export function table(headers: string[], rows: string[][]): string {
  if (rows.length === 0) return '';
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** key: value lines. */
export function keyValues(entries: [string, unknown][]): string {
  const width = Math.max(...entries.map(([k]) => k.length));
  return entries
    .map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${v === null || v === undefined ? '-' : typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
    .join('\n');
}
