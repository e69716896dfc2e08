import { performance } from 'node:perf_hooks';
import { ImageBuildError } from './errors.ts';
import type { ImageBuildProgress, ImageLayer } from './types.ts';

/** Distributes the `Omit` over each member of a union, so a progress event can be built without `elapsedMs`. */
type WithoutElapsed<T> = T extends unknown ? Omit<T, 'elapsedMs'> : never;

/** Emits progress events stamped with the time since the build started, and times build stages. */
export class ProgressReporter {
  readonly #startMs = performance.now();
  readonly #listener: ((progress: ImageBuildProgress) => void) | undefined;

  constructor(listener?: (progress: ImageBuildProgress) => void) {
    this.#listener = listener;
  }

  /** Milliseconds since this reporter was created. */
  elapsedMs(): number {
    return Math.round(performance.now() - this.#startMs);
  }

  emit(event: WithoutElapsed<ImageBuildProgress>): void {
    this.#listener?.({ ...event, elapsedMs: this.elapsedMs() } as ImageBuildProgress);
  }

  /**
   * Runs one build stage between `stage-start` and `stage-done` events. `run` gets a line sink that turns a
   * command's output into `output` events. A failure is tagged with the layer and stage it happened in.
   */
  async stage<T>(layer: ImageLayer, stage: string, run: (onLine: (line: string) => void) => Promise<T>): Promise<T> {
    const startMs = performance.now();
    this.emit({ type: 'stage-start', layer, stage });
    try {
      const result = await run((line) => this.emit({ type: 'output', layer, stage, line }));
      this.emit({ type: 'stage-done', layer, stage, stageMs: Math.round(performance.now() - startMs) });
      return result;
    } catch (error) {
      if (error instanceof ImageBuildError && error.stage === undefined) {
        error.layer = layer;
        error.stage = stage;
      }
      throw error;
    }
  }
}
