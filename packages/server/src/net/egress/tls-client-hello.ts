/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends, and whether it offers
 * Encrypted Client Hello. The egress proxy needs only these and must not terminate TLS; Node's `tls` module
 * cannot give them without taking over the connection, and the npm parsers for it are unmaintained one-file
 * packages, so this reads the few fields on the way (RFC 8446 §4.1.2, RFC 6066 §3) itself, checking every length
 * against the bytes present.
 *
 * With ECH (draft-ietf-tls-esni, extension 0xfe0d) the SNI in the clear is only the outer, public name of a
 * front end; the name the server really serves is inside the encrypted inner hello, out of the proxy's sight.
 */

export type ClientHelloResult =
  /** More bytes are needed (the hello may span several TLS records or TCP segments). */
  | { kind: 'incomplete' }
  /** Not a TLS ClientHello at all. */
  | { kind: 'invalid'; reason: string }
  /**
   * A ClientHello; `serverName` is null when it names no host (e.g. a connection to an address).
   * `encryptedClientHello`: it carries the encrypted_client_hello extension (its SNI is only the outer name).
   */
  | { kind: 'hello'; serverName: string | null; encryptedClientHello: boolean };

/** The largest ClientHello read before giving up (post-quantum key shares make hellos of a few KiB). */
export const MAX_CLIENT_HELLO_BYTES = 16 * 1024;

const HANDSHAKE_RECORD = 22;
const CLIENT_HELLO = 1;
const SERVER_NAME_EXTENSION = 0;
/** encrypted_client_hello (draft-ietf-tls-esni-18 §5); the ClientHello's outer SNI then names only a front end. */
export const ENCRYPTED_CLIENT_HELLO_EXTENSION = 0xfe0d;
const HOST_NAME = 0;

/** Joins the payloads of the handshake records at the start of `data`; null when the first record is incomplete. */
function handshakeBytes(data: Buffer): Buffer | { invalid: string } | null {
  const parts: Buffer[] = [];
  let offset = 0;
  while (offset + 5 <= data.length) {
    if (data[offset] !== HANDSHAKE_RECORD) return parts.length ? Buffer.concat(parts) : { invalid: 'not a TLS handshake record' };
    if (data[offset + 1] !== 3) return { invalid: 'not a TLS record version' };
    const length = data.readUInt16BE(offset + 3);
    if (offset + 5 + length > data.length) break;
    parts.push(data.subarray(offset + 5, offset + 5 + length));
    offset += 5 + length;
  }
  return parts.length ? Buffer.concat(parts) : null;
}

/** Parses what has arrived so far of a client's first flight. */
export function parseClientHello(data: Buffer): ClientHelloResult {
  if (data.length > 0 && data[0] !== HANDSHAKE_RECORD) return { kind: 'invalid', reason: 'not a TLS handshake record' };
  const handshake = handshakeBytes(data);
  if (handshake === null) return data.length >= MAX_CLIENT_HELLO_BYTES ? { kind: 'invalid', reason: 'ClientHello too large' } : { kind: 'incomplete' };
  if ('invalid' in handshake) return { kind: 'invalid', reason: handshake.invalid };
  if (handshake.length < 4) return { kind: 'incomplete' };
  if (handshake[0] !== CLIENT_HELLO) return { kind: 'invalid', reason: 'the first handshake message is not a ClientHello' };
  const helloLength = handshake.readUIntBE(1, 3);
  if (helloLength > MAX_CLIENT_HELLO_BYTES) return { kind: 'invalid', reason: 'ClientHello too large' };
  if (handshake.length < 4 + helloLength)
    return data.length >= MAX_CLIENT_HELLO_BYTES ? { kind: 'invalid', reason: 'ClientHello too large' } : { kind: 'incomplete' };
  const hello = handshake.subarray(4, 4 + helloLength);
  const bad = (reason: string): ClientHelloResult => ({ kind: 'invalid', reason });
  // legacy_version (2), random (32), then session id, cipher suites, compression methods, extensions.
  let at = 34;
  if (at + 1 > hello.length) return bad('truncated ClientHello');
  at += 1 + hello[at]!;
  if (at + 2 > hello.length) return bad('truncated ClientHello');
  at += 2 + hello.readUInt16BE(at);
  if (at + 1 > hello.length) return bad('truncated ClientHello');
  at += 1 + hello[at]!;
  if (at === hello.length) return { kind: 'hello', serverName: null, encryptedClientHello: false }; // no extensions at all
  if (at + 2 > hello.length) return bad('truncated ClientHello');
  const extensionsEnd = at + 2 + hello.readUInt16BE(at);
  if (extensionsEnd > hello.length) return bad('truncated extensions');
  at += 2;
  // Every extension is read (not only up to server_name): ECH may come after it.
  let serverName: string | null = null;
  let encryptedClientHello = false;
  const seen = new Set<number>();
  while (at + 4 <= extensionsEnd) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    const body = hello.subarray(at + 4, at + 4 + length);
    if (at + 4 + length > extensionsEnd) return bad('truncated extension');
    // RFC 8446 §4.2: an extension type appears at most once; two server_names could name two hosts.
    if (seen.has(type)) return bad(`extension ${type} appears twice`);
    seen.add(type);
    if (type === SERVER_NAME_EXTENSION) {
      const name = serverNameOf(body);
      if (typeof name !== 'string' && name !== null) return name;
      serverName = name;
    } else if (type === ENCRYPTED_CLIENT_HELLO_EXTENSION) encryptedClientHello = true;
    at += 4 + length;
  }
  return { kind: 'hello', serverName, encryptedClientHello };
}

/** The host_name entry of a server_name extension (RFC 6066 allows one of each type); null when it has none. */
function serverNameOf(body: Buffer): string | null | { kind: 'invalid'; reason: string } {
  if (body.length < 2) return { kind: 'invalid', reason: 'truncated server_name' };
  const end = Math.min(body.length, 2 + body.readUInt16BE(0));
  let at = 2;
  while (at + 3 <= end) {
    const type = body[at]!;
    const length = body.readUInt16BE(at + 1);
    if (at + 3 + length > end) return { kind: 'invalid', reason: 'truncated server_name' };
    if (type === HOST_NAME) {
      const name = body.subarray(at + 3, at + 3 + length).toString('latin1');
      // A host name is ASCII letters, digits, '-', '_' and dots; anything else is not a name we could match.
      if (!/^[A-Za-z0-9._-]{1,253}$/.test(name)) return { kind: 'invalid', reason: 'server_name is not a host name' };
      return name.toLowerCase().replace(/\.$/, '');
    }
    at += 3 + length;
  }
  return null;
}
