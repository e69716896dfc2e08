/**
 * The output a run printed, as the Run panel holds it: chunks of one stream each (stderr shown apart), bounded so
 * that a chatty run cannot stall the page.
 */

export type OutputStream = 'stdout' | 'stderr';

/** A stretch of output from one stream (neighbours from the same stream are merged). */
export interface OutputChunk {
  stream: OutputStream;
  text: string;
}

/** The most output the page holds; a chatty run keeps its newest. */
export const OUTPUT_LIMIT_CHARS = 1_000_000;

/** The output and whether older output was dropped. */
export interface HeldOutput {
  output: OutputChunk[];
  trimmed: boolean;
}

/** `text` added to the output: merged into the last chunk when it is the same stream, the oldest dropped past the limit. */
export function appendOutput<T extends HeldOutput>(state: T, stream: OutputStream, text: string): T {
  if (text === '') return state;
  const output = [...state.output];
  const last = output.at(-1);
  if (last?.stream === stream) output[output.length - 1] = { stream, text: last.text + text };
  else output.push({ stream, text });
  let total = output.reduce((sum, chunk) => sum + chunk.text.length, 0);
  let trimmed = state.trimmed;
  while (total > OUTPUT_LIMIT_CHARS) {
    const first = output[0]!;
    const over = total - OUTPUT_LIMIT_CHARS;
    trimmed = true;
    if (first.text.length <= over) {
      output.shift();
      total -= first.text.length;
    } else {
      output[0] = { stream: first.stream, text: first.text.slice(over) };
      total -= over;
    }
  }
  return { ...state, output, trimmed };
}
