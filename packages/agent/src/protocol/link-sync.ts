/**
 * Link sync: the few bytes exchanged on the raw channel (virtio-serial port, unix socket) before each HTTP/2
 * session, so that every session starts on a clean byte boundary in both directions.
 *
 * Why it exists: a virtio-serial port is not a connection. When the host side disconnects, guest writes that
 * were in flight may be delivered to the *next* host, bytes the old host sent may still be unread in the guest,
 * and a host that reconnects quickly (or a VM restored from a snapshot) may never show the guest an EOF. So:
 *
 * 1. The host sends `HELLO + nonce` (16 random bytes), and repeats it with growing pauses until answered.
 * 2. The agent, whenever it is waiting for a host, discards bytes until a hello, answers `READY + nonce`, then
 *    discards bytes until the HTTP/2 client preface and starts a fresh HTTP/2 server session from there.
 * 3. The host discards bytes until `READY + its nonce`; everything after is the agent's HTTP/2 session.
 *
 * A hello starts with 0xFF 0xFF 0xFF: if it lands in a still-running old agent session, the HTTP/2 parser reads
 * a frame length of 16 MiB − 1, beyond any allowed frame size, and ends that session at once; the agent then
 * waits for the next (repeated) hello. Repeats carry {@link HELLO_PADDING_BYTES} of 0xFF first, so even a parser
 * stuck inside a maximum-size frame reaches such a header.
 */

/** The HTTP/2 client connection preface (RFC 9113 §3.4). */
export const HTTP2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** Length of the host's nonce. */
export const LINK_NONCE_BYTES = 16;

const HELLO_TAG = Buffer.concat([Buffer.from([0xff, 0xff, 0xff]), Buffer.from('sandboxd-link-hello/1:', 'latin1')]);
const READY_TAG = Buffer.from('sandboxd-link-ready/1:', 'latin1');

/** Total length of a hello (tag + nonce), without padding. */
export const HELLO_BYTES = HELLO_TAG.length + LINK_NONCE_BYTES;
/** Total length of a ready answer. */
export const READY_BYTES = READY_TAG.length + LINK_NONCE_BYTES;
/** 0xFF bytes sent before a repeated hello: one maximum default HTTP/2 frame (16 KiB) plus its header. */
export const HELLO_PADDING_BYTES = 16384 + 9;

/** The host's hello; `padded` for repeats (see the module comment). */
export function encodeHostHello(nonce: Buffer, padded = false): Buffer {
  checkNonce(nonce);
  const parts = [HELLO_TAG, nonce];
  if (padded) parts.unshift(Buffer.alloc(HELLO_PADDING_BYTES, 0xff));
  return Buffer.concat(parts);
}

/** The agent's answer to a hello carrying `nonce`. */
export function encodeAgentReady(nonce: Buffer): Buffer {
  checkNonce(nonce);
  return Buffer.concat([READY_TAG, nonce]);
}

/** Where a hello was found in a buffer. */
export interface HelloMatch {
  /** Index of the first byte of the hello. */
  start: number;
  /** Index just after the nonce. */
  end: number;
  nonce: Buffer;
}

/**
 * Finds the first complete hello in `buffer`. Returns null when there is none; a hello cut off at the end is
 * not reported, so callers keep the last {@link HELLO_BYTES} − 1 bytes when they drop the rest.
 */
export function findHostHello(buffer: Buffer): HelloMatch | null {
  const start = buffer.indexOf(HELLO_TAG);
  if (start < 0) return null;
  const end = start + HELLO_BYTES;
  if (end > buffer.length) return null;
  return { start, end, nonce: Buffer.from(buffer.subarray(start + HELLO_TAG.length, end)) };
}

/** Index just after `READY + nonce` in `buffer`, or -1. */
export function findAgentReady(buffer: Buffer, nonce: Buffer): number {
  const index = buffer.indexOf(encodeAgentReady(nonce));
  return index < 0 ? -1 : index + READY_BYTES;
}

function checkNonce(nonce: Buffer): void {
  if (nonce.length !== LINK_NONCE_BYTES) throw new RangeError(`link nonce must be ${LINK_NONCE_BYTES} bytes`);
}
