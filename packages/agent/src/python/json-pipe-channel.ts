/**
 * Length-prefixed JSON messages over a pair of pipes: a 4-byte big-endian length, then UTF-8 JSON. The agent
 * speaks it with its Python processes (kernels, the privileged helper), whose side is a few lines of `struct`.
 */
import type { Readable, Writable } from 'node:stream';

/** Messages larger than this are a broken peer. */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;

/** One side of a message channel to a child process. */
export class JsonPipeChannel<In extends object, Out extends object> {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(
    input: Readable,
    private readonly output: Writable,
    onMessage: (message: In) => void,
    onBroken: (error: Error) => void,
  ) {
    output.on('error', () => undefined); // EPIPE once the child died; its exit is reported elsewhere
    input.on('error', () => undefined);
    input.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      try {
        for (const message of this.drain()) onMessage(message);
      } catch (error) {
        onBroken(error as Error);
      }
    });
  }

  /** Sends one message. */
  send(message: Out): void {
    const body = Buffer.from(JSON.stringify(message));
    const header = Buffer.allocUnsafe(4);
    header.writeUInt32BE(body.length, 0);
    this.output.write(Buffer.concat([header, body]));
  }

  private *drain(): Generator<In> {
    while (this.buffered >= 4) {
      const joined = this.chunks.length === 1 ? (this.chunks[0] as Buffer) : Buffer.concat(this.chunks, this.buffered);
      this.chunks = [joined];
      const length = joined.readUInt32BE(0);
      if (length > MAX_MESSAGE_BYTES) throw new Error(`message of ${length} bytes from a child process`);
      if (joined.length < 4 + length) return;
      const body = joined.subarray(4, 4 + length);
      const rest = joined.subarray(4 + length);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
      yield JSON.parse(body.toString('utf8')) as In;
    }
  }
}
