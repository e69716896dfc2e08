/**
 * Input for terminals, as the SDK sends it: one `SendInput` call per keystroke or line, each a separate request.
 * Typing goes through the terminal's attachment (core's `TerminalService.attach`, the one way into a terminal);
 * one attachment per terminal is kept open while input keeps coming, so consecutive inputs arrive in order on one
 * stream (an attachment opened per call and closed right after could drop what it had not yet sent), and closed
 * after {@link IDLE_MS} without input. Its output is not needed here and is dropped.
 */
import type { Principal } from '../../../core/authenticator.ts';
import type { TerminalService } from '../../../core/terminals.ts';
import type { PtyAttachment } from '../../../core/vm-engine.ts';

/** How long an input attachment stays open after the last input. */
export const IDLE_MS = 30_000;

interface InputChannel {
  attachment: Promise<PtyAttachment>;
  timer: NodeJS.Timeout | null;
}

export class TerminalInputs {
  private readonly channels = new Map<string, InputChannel>();

  constructor(private readonly terminals: TerminalService) {}

  /** Types `data` into the session's terminal `ptyId` (the caller checked it is the principal's). */
  async write(principal: Principal, sessionId: string, ptyId: string, data: Buffer): Promise<void> {
    const key = `${sessionId}/${ptyId}`;
    let channel = this.channels.get(key);
    if (!channel) {
      const opened = this.terminals
        .attach(principal, { kind: 'session', sessionId }, ptyId, null, { onOutput: () => undefined, onExit: () => undefined })
        .then(({ attachment }) => attachment);
      const created: InputChannel = { attachment: opened, timer: null };
      channel = created;
      this.channels.set(key, created);
      opened.then(
        (attachment) => void attachment.closed.then(() => this.forget(key, created)),
        () => this.forget(key, created),
      );
    }
    const attachment = await channel.attachment;
    attachment.write(data);
    if (channel.timer) clearTimeout(channel.timer);
    const current = channel;
    channel.timer = setTimeout(() => {
      this.forget(key, current);
      attachment.detach();
    }, IDLE_MS).unref();
  }

  private forget(key: string, channel: InputChannel): void {
    if (channel.timer) clearTimeout(channel.timer);
    if (this.channels.get(key) === channel) this.channels.delete(key);
  }
}
