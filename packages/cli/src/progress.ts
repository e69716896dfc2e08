/**
 * Progress on stderr for uploads, downloads and template builds. On a terminal: one line redrawn in place at most
 * ten times a second, `name  45% [=====>    ] 12.3 MiB / 27.0 MiB  8.1 MiB/s  ETA 2s`, ended by a final line (or
 * cleared on an error). Elsewhere, with `--progress`: plain lines, about one a second, that a log keeps readably.
 * Written here rather than taken from npm: cli-progress 3.12 (the well-kept choice) computes no rate, has no byte
 * units and no form for an unknown size, so its format function would have to compute and draw those itself (most of
 * the drawing below), and the modes, the line printed above a bar and the clean end on Ctrl-C would be needed around
 * it anyway.
 */

/** How progress is shown: not at all, redrawn in place (a terminal), or as plain lines (`--progress` on a pipe). */
export type ProgressMode = 'off' | 'redraw' | 'lines';

/** `--progress` forces it on (lines when stderr is no terminal), `--no-progress` off; by default a terminal without --json shows it. */
export function progressMode(flag: boolean | undefined, json: boolean, stderrIsTerminal: boolean): ProgressMode {
  if (flag === false) return 'off';
  if (flag === true) return stderrIsTerminal ? 'redraw' : 'lines';
  return stderrIsTerminal && !json ? 'redraw' : 'off';
}

/** Where progress is drawn: stderr, or a test's recorder. */
export interface ProgressSink {
  write(text: string): void;
  /** Terminal width: a redrawn line longer than this would wrap and could no longer be redrawn in place. */
  columns?: number | undefined;
}

export interface ProgressOptions {
  mode: ProgressMode;
  sink?: ProgressSink;
  /** Milliseconds now (tests move it by hand). */
  now?: () => number;
}

/** A transfer's progress: bytes so far, against a total when it is known. */
export interface ByteProgress {
  /** Bytes moved so far, absolute (a retry that starts again reports from 0). */
  set(bytes: number): void;
  add(bytes: number): void;
  /** It succeeded: a final line with the size (`totalBytes` when given: what was sent, counted or not) and time. */
  finish(totalBytes?: number): void;
  /** It failed or was interrupted: the line is cleared, never left half-drawn. */
  stop(): void;
}

/** Where a template build is: step n of m. */
export interface BuildStep {
  step: string | null;
  index: number;
  count: number;
}

/** A build's progress line, with the build's log printed above it. */
export interface StepProgress {
  update(step: BuildStep): void;
  /** A line of the log, printed above the progress line (which is drawn again below it). */
  print(line: string): void;
  /** The build ended: a final line saying how (`failed`: where it failed). */
  finish(outcome: 'ready' | 'failed'): void;
  stop(): void;
}

const REDRAW_EVERY_MS = 100;
const LINE_EVERY_MS = 1000;
/** The rate is measured over the last few seconds: it follows a transfer that speeds up or stalls. */
const RATE_WINDOW_MS = 3000;
const BAR_CELLS = 20;
const CLEAR_LINE = '\r\x1b[2K';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `512 B`, `12.3 MiB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** `2s`, `1m05s`, `2h03m`. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}

/** `[=====>    ]` for a fraction from 0 to 1. */
function bar(fraction: number): string {
  const filled = Math.min(BAR_CELLS, Math.floor(fraction * BAR_CELLS));
  return `[${'='.repeat(filled)}${filled < BAR_CELLS ? '>' : ''}${' '.repeat(Math.max(0, BAR_CELLS - filled - 1))}]`;
}

/** The bar's line: `name  45% [=====>    ] 12.3 MiB / 27.0 MiB  8.1 MiB/s  ETA 2s`; without a total, bytes and rate only. */
export function byteLine(name: string, bytes: number, totalBytes: number | undefined, bytesPerSecond: number, tail: string): string {
  const rate = `${formatBytes(Math.round(bytesPerSecond))}/s`;
  const end = tail ? `  ${tail}` : '';
  if (totalBytes === undefined) return `${name}  ${formatBytes(bytes)}  ${rate}${end}`;
  const fraction = totalBytes === 0 ? 1 : Math.min(1, bytes / totalBytes);
  const percent = `${Math.floor(fraction * 100)}%`;
  return `${name}  ${percent} ${bar(fraction)} ${formatBytes(bytes)} / ${formatBytes(totalBytes)}  ${rate}${end}`;
}

/** A line drawn on the sink: redrawn in place, or printed whole, and always ended cleanly. */
class LiveLine {
  private drawn = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly sink: ProgressSink;
  // A process that exits (process.exit, the event loop emptied) with the line drawn clears it first.
  private readonly clearAtExit = () => this.clear();

  constructor(
    readonly mode: Exclude<ProgressMode, 'off'>,
    sink: ProgressSink | undefined,
    private readonly render: () => string,
    private readonly tick: () => void,
  ) {
    this.sink = sink ?? process.stderr;
    this.timer = setInterval(() => this.tick(), mode === 'redraw' ? REDRAW_EVERY_MS : LINE_EVERY_MS);
    // Progress never keeps the process alive on its own.
    this.timer.unref();
    if (mode === 'redraw') process.on('exit', this.clearAtExit);
  }

  /** Redraws the line in place (redraw mode), or prints it as a line of its own (lines mode). */
  draw(): void {
    if (this.timer === undefined) return;
    const text = this.render();
    if (this.mode === 'lines') {
      this.sink.write(`${text}\n`);
      return;
    }
    const width = this.sink.columns;
    this.sink.write(`${CLEAR_LINE}${width && text.length >= width ? text.slice(0, width - 1) : text}`);
    this.drawn = true;
  }

  /** A line above the progress line (a log line); the progress line follows below it again. */
  print(line: string): void {
    this.clear();
    this.sink.write(`${line}\n`);
    if (this.mode === 'redraw' && this.timer !== undefined) this.draw();
  }

  private clear(): void {
    if (!this.drawn) return;
    this.sink.write(CLEAR_LINE);
    this.drawn = false;
  }

  /** Stops drawing; `finalLine` stays as the last word, else the line is cleared. */
  end(finalLine?: string): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    process.off('exit', this.clearAtExit);
    this.clear();
    if (finalLine !== undefined) this.sink.write(`${finalLine}\n`);
  }
}

const NO_BYTE_PROGRESS: ByteProgress = { set: () => {}, add: () => {}, finish: () => {}, stop: () => {} };
const NO_STEP_PROGRESS: StepProgress = {
  update: () => {},
  print: (line) => process.stderr.write(`${line}\n`),
  finish: () => {},
  stop: () => {},
};

/** Progress of a transfer of `totalBytes` (undefined: not known) named `name`. */
export function byteProgress(name: string, totalBytes: number | undefined, options: ProgressOptions): ByteProgress {
  if (options.mode === 'off') return NO_BYTE_PROGRESS;
  const now = options.now ?? Date.now;
  const started = now();
  let bytes = 0;
  let printedBytes = -1;
  // (time, bytes) samples of the last few seconds, one per tick: the rate is measured over them.
  const samples: [number, number][] = [[started, 0]];
  const rate = () => {
    const t = now();
    while (samples.length > 1 && t - samples[0]![0] > RATE_WINDOW_MS) samples.shift();
    const [t0, b0] = samples[0]!;
    return t - t0 > 0 ? ((bytes - b0) * 1000) / (t - t0) : 0;
  };
  const render = () => {
    const perSecond = rate();
    const left =
      totalBytes !== undefined && perSecond > 0 && bytes < totalBytes ? `ETA ${formatDuration(Math.ceil((totalBytes - bytes) / perSecond) * 1000)}` : '';
    return byteLine(name, bytes, totalBytes, perSecond, left);
  };
  const line: LiveLine = new LiveLine(options.mode, options.sink, render, () => {
    samples.push([now(), bytes]);
    // A pipe gets a line a second while bytes move, not one per second of a stall.
    if (line.mode === 'lines' && bytes === printedBytes) return;
    printedBytes = bytes;
    line.draw();
  });
  return {
    set(value) {
      bytes = value;
    },
    add(value) {
      bytes += value;
    },
    finish(total) {
      const sent = total ?? bytes;
      const elapsed = now() - started;
      line.end(byteLine(name, sent, sent, elapsed > 0 ? (sent * 1000) / elapsed : 0, `in ${formatDuration(elapsed)}`));
    },
    stop: () => line.end(),
  };
}

/** Progress of a template build named `name`: its step, n of m, and the time it has taken. */
export function stepProgress(name: string, options: ProgressOptions): StepProgress {
  if (options.mode === 'off') return NO_STEP_PROGRESS;
  const now = options.now ?? Date.now;
  const started = now();
  let current: BuildStep | null = null;
  const describe = (step: BuildStep) => `step ${step.index}/${step.count}${step.step ? ` ${step.step}` : ''}`;
  const render = () => `${name}  ${current ? describe(current) : 'starting'}  ${formatDuration(now() - started)}`;
  // On a terminal the time goes on moving; in lines mode a line is printed when the step changes (below).
  const line = new LiveLine(options.mode, options.sink, render, () => options.mode === 'redraw' && line.draw());
  return {
    update(step) {
      const changed = current === null || current.index !== step.index || current.step !== step.step;
      current = step;
      if (changed) line.draw();
    },
    print: (text) => line.print(text),
    finish(outcome) {
      const took = formatDuration(now() - started);
      line.end(
        outcome === 'ready'
          ? `${name}  ready: ${current?.count ?? 0} steps in ${took}`
          : `${name}  failed at ${current ? describe(current) : 'the start'} after ${took}`,
      );
    },
    stop: () => line.end(),
  };
}

/**
 * `blob` whose bytes are counted as they are read (the upload's progress): `onRead` gets the bytes read so far by the
 * current reader; a new reader (a retry) counts from 0 again. Built on `blob` itself, so nothing is copied and a
 * file's Blob stays on disk; readers that take a Blob's bytes by other means (a small upload's FormData) are not
 * counted.
 */
export function countedBlob(blob: Blob, onRead: (bytesSoFar: number) => void): Blob {
  return new (class CountedBlob extends Blob {
    override stream(): ReadableStream<Uint8Array> {
      let read = 0;
      onRead(0);
      return blob.stream().pipeThrough(
        new TransformStream<Uint8Array, Uint8Array>({
          transform(chunk, controller) {
            read += chunk.byteLength;
            onRead(read);
            controller.enqueue(chunk);
          },
        }),
      );
    }
  })([blob]);
}
