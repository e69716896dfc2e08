/**
 * The small framing used inside streamed HTTP/2 bodies (exec and PTY attachments): each frame is a 1-byte type,
 * a 4-byte big-endian payload length, and the payload. Data frames carry raw bytes; control frames carry JSON.
 * HTTP/2 already delimits requests; this only separates the sub-streams (stdout, stderr, control) of one.
 */

/** Frame types. Host → agent below 0x10, agent → host from 0x10. */
export const FrameType = {
  /** JSON: the operation's parameters; always the first frame of a request body. */
  Request: 0x01,
  /** Raw bytes for the process's stdin. */
  Stdin: 0x02,
  /** No payload: close the process's stdin. Ending the request body does the same. */
  StdinEnd: 0x03,
  /** JSON `{signal}`: deliver a signal to the process group. */
  Signal: 0x04,
  /** JSON `{cols, rows}`: resize the terminal of a PTY attachment. */
  Resize: 0x05,
  /** JSON `{pid}`: the process started. */
  Started: 0x10,
  /** Raw bytes the process wrote to stdout. */
  Stdout: 0x11,
  /** Raw bytes the process wrote to stderr. */
  Stderr: 0x12,
  /** JSON: how the process ended; always the last frame. */
  Exit: 0x13,
  /** JSON error body: the operation failed; always the last frame. */
  Error: 0x14,
} as const;

/** One of {@link FrameType}'s values. */
export type FrameTypeCode = (typeof FrameType)[keyof typeof FrameType];

/** Bytes before each payload. */
export const FRAME_HEADER_BYTES = 5;

/** Larger payloads are a protocol error: they would only come from a corrupt or hostile peer. */
export const MAX_FRAME_PAYLOAD_BYTES = 16 * 1024 * 1024;

/** A decoded frame. `payload` may share memory with the chunk it was cut from. */
export interface Frame {
  type: number;
  payload: Buffer;
}

/** Thrown by {@link FrameDecoder} on input that cannot be a frame stream. */
export class FrameError extends Error {
  override readonly name = 'FrameError';
}

/** Encodes one frame into a single buffer (one copy of the payload, so one write per frame). */
export function encodeFrame(type: FrameTypeCode, payload: Uint8Array | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload;
  if (body.length > MAX_FRAME_PAYLOAD_BYTES) throw new FrameError(`frame payload of ${body.length} bytes is too large`);
  const frame = Buffer.allocUnsafe(FRAME_HEADER_BYTES + body.length);
  frame.writeUInt8(type, 0);
  frame.writeUInt32BE(body.length, 1);
  frame.set(body, FRAME_HEADER_BYTES);
  return frame;
}

/** Encodes a control frame whose payload is `value` as JSON. */
export function encodeJsonFrame(type: FrameTypeCode, value: unknown): Buffer {
  return encodeFrame(type, JSON.stringify(value));
}

/** Parses a control frame's JSON payload. */
export function decodeJsonPayload<T>(frame: Frame): T {
  try {
    return JSON.parse(frame.payload.toString('utf8')) as T;
  } catch (error) {
    throw new FrameError(`frame of type ${frame.type} does not carry valid JSON`, { cause: error });
  }
}

/**
 * Incremental decoder: feed chunks as they arrive, get the complete frames. Keeps the chunks it has not
 * consumed yet without concatenating them, so a large payload is copied at most once.
 */
export class FrameDecoder {
  private chunks: Buffer[] = [];
  private buffered = 0;

  /** Bytes received but not yet part of a returned frame. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Adds a chunk and returns the frames it completed, in order. */
  push(chunk: Buffer): Frame[] {
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    const frames: Frame[] = [];
    while (this.buffered >= FRAME_HEADER_BYTES) {
      const header = this.peek(FRAME_HEADER_BYTES);
      const type = header.readUInt8(0);
      const length = header.readUInt32BE(1);
      if (length > MAX_FRAME_PAYLOAD_BYTES) throw new FrameError(`frame payload of ${length} bytes is too large`);
      if (this.buffered < FRAME_HEADER_BYTES + length) break;
      this.take(FRAME_HEADER_BYTES);
      frames.push({ type, payload: this.take(length) });
    }
    return frames;
  }

  /** Call at the end of the stream: throws when a frame was cut off. */
  end(): void {
    if (this.buffered > 0) throw new FrameError(`stream ended inside a frame (${this.buffered} bytes left)`);
  }

  private peek(count: number): Buffer {
    const first = this.chunks[0];
    if (first && first.length >= count) return first.subarray(0, count);
    const out = Buffer.allocUnsafe(count);
    let filled = 0;
    for (const chunk of this.chunks) {
      const used = Math.min(chunk.length, count - filled);
      chunk.copy(out, filled, 0, used);
      filled += used;
      if (filled === count) break;
    }
    return out;
  }

  private take(count: number): Buffer {
    if (count === 0) return Buffer.alloc(0);
    const first = this.chunks[0];
    let out: Buffer;
    if (first && first.length >= count) {
      // The common case: the bytes sit in one chunk; hand out a view instead of copying.
      out = first.subarray(0, count);
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
    } else {
      out = Buffer.allocUnsafe(count);
      let filled = 0;
      while (filled < count) {
        const chunk = this.chunks[0] as Buffer;
        const used = Math.min(chunk.length, count - filled);
        chunk.copy(out, filled, 0, used);
        filled += used;
        if (used === chunk.length) this.chunks.shift();
        else this.chunks[0] = chunk.subarray(used);
      }
    }
    this.buffered -= count;
    return out;
  }
}

/** Yields the frames of a byte stream (e.g. an HTTP/2 stream); throws {@link FrameError} on a cut-off frame. */
export async function* readFrames(source: AsyncIterable<Buffer | string>): AsyncGenerator<Frame> {
  const decoder = new FrameDecoder();
  for await (const chunk of source) {
    yield* decoder.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  decoder.end();
}
