/** Collects a stream's bytes up to a limit, remembering whether more came; the rest is dropped, not held. */
export class BoundedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  truncated = false;

  constructor(private readonly limitBytes: number) {}

  push(chunk: Buffer): void {
    const room = this.limitBytes - this.kept;
    if (room <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.truncated = true;
    this.chunks.push(Buffer.from(part));
    this.kept += part.length;
  }

  pushText(text: string): void {
    this.push(Buffer.from(text, 'utf8'));
  }

  /** The kept bytes as UTF-8 (a character cut at the limit becomes U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks, this.kept).toString('utf8');
  }
}
