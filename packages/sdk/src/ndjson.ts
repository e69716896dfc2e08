/** NDJSON answers (a process's output, a directory watch): one JSON event per line, read as they arrive. */
import { withCamelCase } from './camel-case.ts';

export const NDJSON = 'application/x-ndjson';

/** The JSON events of an NDJSON answer (empty lines are the server's keep-alives); cancels the body when left early. */
export async function* ndjsonEvents<T>(response: Response): AsyncGenerator<T> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, newline).trim();
        buffer = buffer.slice(newline + 1);
        if (line !== '') yield withCamelCase(JSON.parse(line) as T) as T;
      }
    }
    if (buffer.trim() !== '') yield withCamelCase(JSON.parse(buffer) as T) as T;
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
