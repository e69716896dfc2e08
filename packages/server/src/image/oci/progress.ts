import { performance } from 'node:perf_hooks';
import { ProgressReporter } from '../progress.ts';
import { asOciImageError } from './errors.ts';
import type { OciBuildProgress, OciBuildStep } from './types.ts';

/** Distributes the `Omit` over each member of a union. */
type WithoutElapsed<T> = T extends unknown ? Omit<T, 'elapsedMs'> : never;

/**
 * Runs the named steps of an OCI build between `step-start` and `step-done` events, turns a step's failure into
 * an `OciImageError` naming it, and forwards the events of the cached layers it uses (as `layer` events of the
 * step that was running).
 */
export class OciProgress {
  readonly #startMs = performance.now();
  readonly #listener: ((progress: OciBuildProgress) => void) | undefined;
  #current: OciBuildStep = 'resolve';
  /** The reporter to hand to the layer store and the lower layers' builds. */
  readonly layers: ProgressReporter;
  /** Milliseconds each finished step took. */
  readonly stepMs: Partial<Record<OciBuildStep, number>> = {};

  constructor(listener?: (progress: OciBuildProgress) => void) {
    this.#listener = listener;
    this.layers = new ProgressReporter((event) => this.emit({ type: 'layer', step: this.#current, event }));
  }

  elapsedMs(): number {
    return Math.round(performance.now() - this.#startMs);
  }

  emit(event: WithoutElapsed<OciBuildProgress>): void {
    this.#listener?.({ ...event, elapsedMs: this.elapsedMs() } as OciBuildProgress);
  }

  /** Runs `step`; `run` gets a sink for its tools' output lines. */
  async step<T>(step: OciBuildStep, run: (onLine: (line: string) => void) => Promise<T>): Promise<T> {
    const startMs = performance.now();
    this.#current = step;
    this.emit({ type: 'step-start', step });
    try {
      const result = await run((line) => this.emit({ type: 'output', step, line }));
      const stepMs = Math.round(performance.now() - startMs);
      this.stepMs[step] = stepMs;
      this.emit({ type: 'step-done', step, stepMs });
      return result;
    } catch (error) {
      throw asOciImageError(error, step);
    }
  }
}
