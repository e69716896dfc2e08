/**
 * A terminal's output as an async stream for the facade's Start and Connect: the terminal's attachment (core's
 * `TerminalService.attach`) delivers by callbacks; this turns them into items a Connect handler can yield, and
 * detaches when the reader leaves (the terminal keeps running, as after E2B's `disconnect()`).
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { PtyAttachment, PtyExit, PtyOutput } from '../../../core/vm-engine.ts';

/** Output held for a reader that does not keep up; past it the stream ends (the terminal keeps running). */
export const MAX_HELD_BYTES = 4 * 1024 * 1024;

export type TerminalItem = { kind: 'output'; data: Buffer } | { kind: 'exit'; exit: PtyExit };

/**
 * The terminal's scrollback, live output and exit, from the attachment `open` makes. Ends after the exit, when
 * `signal` aborts, or with an Unavailable error when the connection to the VM was lost first.
 */
export async function* terminalOutput(open: (output: PtyOutput) => Promise<PtyAttachment>, signal: AbortSignal): AsyncGenerator<TerminalItem> {
  const held: TerminalItem[] = [];
  let heldBytes = 0;
  let overflowed = false;
  let wake: (() => void) | null = null;
  const notify = (): void => {
    wake?.();
    wake = null;
  };
  const attachment = await open({
    onOutput: (data) => {
      heldBytes += data.length;
      if (heldBytes > MAX_HELD_BYTES) overflowed = true;
      else held.push({ kind: 'output', data });
      notify();
    },
    onExit: (exit) => {
      held.push({ kind: 'exit', exit });
      notify();
    },
  });
  let closed = false;
  void attachment.closed.then(() => {
    closed = true;
    notify();
  });
  const onAbort = (): void => notify();
  signal.addEventListener('abort', onAbort);
  try {
    for (;;) {
      const item = held.shift();
      if (item) {
        if (item.kind === 'output') heldBytes -= item.data.length;
        yield item;
        if (item.kind === 'exit') return;
        continue;
      }
      if (signal.aborted) return;
      if (overflowed) throw new ConnectError('the terminal printed faster than this stream was read; connect again for its scrollback', Code.Aborted);
      if (closed) throw new ConnectError('the connection to the terminal in the sandbox was lost', Code.Unavailable);
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    attachment.detach();
  }
}
