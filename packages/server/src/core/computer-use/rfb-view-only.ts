/**
 * View-only for VNC, enforced by the relay rather than trusted to the viewer: the client-to-server half of an
 * RFB (RFC 6143) connection is parsed message by message and input (keys, pointer, clipboard, resize, power
 * and QEMU key events) is dropped, so a viewer with a view-only token cannot type or click whatever it sends.
 * noVNC's own `view_only` only hides its input. Written here because no library filters an RFB stream; it
 * parses only the client's side, which is small. A message it does not know ends the connection (fail closed).
 */
import { Transform, type TransformCallback } from 'node:stream';

/** Client message types (RFC 6143 §7.5 and the registered extensions noVNC sends). */
const SET_PIXEL_FORMAT = 0;
const SET_ENCODINGS = 2;
const FRAMEBUFFER_UPDATE_REQUEST = 3;
const KEY_EVENT = 4;
const POINTER_EVENT = 5;
const CLIENT_CUT_TEXT = 6;
const ENABLE_CONTINUOUS_UPDATES = 150;
const XVP = 250;
const SET_DESKTOP_SIZE = 251;
const CLIENT_FENCE = 248;
const QEMU = 255;

/** Thrown (as the stream's error) for a client message the filter cannot size. */
export class RfbFilterError extends Error {
  override name = 'RfbFilterError';
}

/**
 * The length of the client message at the start of `buffer`, or null when more bytes are needed to know it.
 * Whether it passes is decided by the caller.
 */
export function clientMessageLength(buffer: Buffer): number | null {
  if (buffer.length < 1) return null;
  const need = (n: number): number | null => (buffer.length >= n ? n : null);
  switch (buffer[0]) {
    case SET_PIXEL_FORMAT:
      return 20;
    case SET_ENCODINGS: {
      if (need(4) === null) return null;
      return 4 + 4 * buffer.readUInt16BE(2);
    }
    case FRAMEBUFFER_UPDATE_REQUEST:
    case ENABLE_CONTINUOUS_UPDATES:
      return 10;
    case KEY_EVENT:
      return 8;
    case POINTER_EVENT:
      return 6;
    case CLIENT_CUT_TEXT: {
      if (need(8) === null) return null;
      // A negative length announces the extended clipboard format: its absolute value is the payload's.
      return 8 + Math.abs(buffer.readInt32BE(4));
    }
    case XVP:
      return 4;
    case SET_DESKTOP_SIZE: {
      if (need(8) === null) return null;
      return 8 + 16 * buffer[6]!;
    }
    case CLIENT_FENCE: {
      if (need(9) === null) return null;
      return 9 + buffer[8]!;
    }
    case QEMU: {
      if (need(2) === null) return null;
      if (buffer[1] === 0) return 12; // extended key event
      throw new RfbFilterError(`QEMU client message ${buffer[1]} is not supported`);
    }
    default:
      throw new RfbFilterError(`unknown RFB client message type ${buffer[0]}`);
  }
}

/** Buffered at most for one message (a clipboard can be large; a view-only viewer sends none that passes). */
const MAX_MESSAGE_BYTES = 1024 * 1024;

const INPUT = new Set([KEY_EVENT, POINTER_EVENT, CLIENT_CUT_TEXT, XVP, SET_DESKTOP_SIZE, QEMU]);

/**
 * Passes the handshake (protocol version, chosen security type, ClientInit: the server offers only "None"), then
 * every client message except input. Messages may arrive split across chunks or several to a chunk.
 */
export class RfbViewOnlyFilter extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  /** Handshake bytes still to pass through: 12 (version), then 1 (security type) and 1 (ClientInit) for 3.7+. */
  private handshakeLeft: number | null = null;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    try {
      const out: Buffer[] = [];
      if (this.handshakeLeft === null) {
        if (this.pending.length < 12) return callback();
        // RFB 3.3 has no security-type choice from the client: only its ClientInit follows the version.
        this.handshakeLeft = this.pending.subarray(0, 12).toString('latin1') === 'RFB 003.003\n' ? 13 : 14;
      }
      if (this.handshakeLeft > 0) {
        const take = Math.min(this.handshakeLeft, this.pending.length);
        out.push(this.pending.subarray(0, take));
        this.pending = this.pending.subarray(take);
        this.handshakeLeft -= take;
      }
      while (this.handshakeLeft === 0 && this.pending.length > 0) {
        const length = clientMessageLength(this.pending);
        if (length !== null && length > MAX_MESSAGE_BYTES) throw new RfbFilterError(`a client message of ${length} bytes is larger than a viewer needs`);
        if (length === null || this.pending.length < length) break;
        if (!INPUT.has(this.pending[0]!)) out.push(this.pending.subarray(0, length));
        this.pending = this.pending.subarray(length);
      }
      if (out.length > 0) this.push(Buffer.concat(out));
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }
}
