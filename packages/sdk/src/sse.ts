/** Server-Sent Events read from a fetch answer (no EventSource: it cannot send headers such as X-API-Key). */

/** One message: its `id:`, `event:` and `data:` lines joined; or, alone, a `retry:` the server asked for. */
export interface SseMessage {
  id: string;
  event: string;
  data: string;
  /** Milliseconds the server asks a client to wait before reconnecting, when this message carried `retry:`. */
  retryMs?: number;
}

/** The messages of an event stream as they arrive; comments (`:` keep-alives) are skipped. Cancels the body when left. */
export async function* sseMessages(response: Response): AsyncGenerator<SseMessage> {
  if (!response.body) return;
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  // `id` carries over from message to message, as the EventSource specification says.
  let current: { id: string; event: string; data: string[]; retryMs?: number } = { id: '', event: 'message', data: [] };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline: number;
      while ((newline = buffer.search(/\r?\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        buffer = buffer.slice(buffer[newline] === '\r' ? newline + 2 : newline + 1);
        if (line === '') {
          if (current.data.length > 0 || current.retryMs !== undefined) {
            yield {
              id: current.id,
              event: current.event,
              data: current.data.join('\n'),
              ...(current.retryMs !== undefined ? { retryMs: current.retryMs } : {}),
            };
          }
          current = { id: current.id, event: 'message', data: [] };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') current.id = value;
        else if (field === 'event') current.event = value;
        else if (field === 'data') current.data.push(value);
        else if (field === 'retry' && /^\d+$/.test(value)) current.retryMs = Number(value);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}
