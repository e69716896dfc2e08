/**
 * Keeps secret values out of what an intercepted upstream answers. A bound host may echo what it was sent (an
 * "Invalid URL" error, a redirect to the Host it was asked for, a reflected CORS origin, the Basic credentials of
 * a debugging endpoint), so every value of the session's secrets is masked in the status text, the header names
 * and values and the body of each answer, in each form a server is likely to write it in:
 *
 * - as it is (UTF-8 bytes);
 * - URL-encoded: `encodeURIComponent`, and form encoding (`+` for a space, `*-._` kept), each with upper- and
 *   lower-case hex digits;
 * - inside a JSON string: JSON.stringify's escapes, with `\/` for `/`, and with every non-ASCII character as
 *   `\uXXXX` (Python's default);
 * - hex (lower and upper case);
 * - base64, standard and URL-safe: of the value alone (with and without padding), and the part that depends on the
 *   value only when it sits at any of the three byte offsets inside a larger base64 blob (echoed
 *   `Basic base64(user:secret)`, a JWT). The few bits that share a base64 digit with the bytes around it are not
 *   masked: at most 4 bits at each end of the value;
 * - the header values that carried a secret upstream in this request, base64'd the same ways (an echo of the
 *   whole `Authorization: Basic …` header, base64'd, holds the secret base64'd twice).
 *
 * A match is replaced by as many `*` as it has bytes. The same length keeps a `Content-Length` true, so an
 * uncompressed answer streams through with its own framing; `*` is valid in a header value, a header name (a
 * token character), a URL and a JSON string, and invalid in base64, so a masked blob does not decode to something
 * plausible but wrong.
 *
 * Bodies are scrubbed as they stream: each chunk is searched with the bytes held back from the one before, and
 * only the bytes that could still begin a match are held back (the longest end of the data that is the start of
 * some form), so an event stream's chunks (which end in a line break no form starts with) pass with no delay.
 */
import { Transform, type TransformCallback } from 'node:stream';

/** The mask byte, `*`. */
const MASK = 0x2a;
/** Forms shorter than this (a base64 part of a value of a byte or two) are not searched: they would match at random. */
const MIN_FORM_BYTES = 4;

/** `encodeURIComponent` with lower-case hex digits. */
function lowerHex(encoded: string): string {
  return encoded.replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase());
}

/** application/x-www-form-urlencoded, as URLSearchParams writes it. */
function formEncoded(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** Every non-ASCII UTF-16 unit as `\uXXXX`, as Python's json.dumps writes by default. */
function asciiJson(json: string): string {
  return json.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** The base64 digits (no padding) that depend on `bytes` only, when they sit `offset` bytes into a 3-byte group. */
function base64Core(bytes: Buffer, offset: 0 | 1 | 2, urlSafe: boolean): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes])
    .toString(urlSafe ? 'base64url' : 'base64')
    .replace(/=+$/, '');
  const first = Math.ceil((offset * 8) / 6);
  const end = Math.floor(((offset + bytes.length) * 8) / 6);
  return encoded.slice(first, end);
}

/**
 * The forms of `value` searched for in answers (distinct, longest first). `base64Only`: only its base64 forms
 * (for a header value that carries a secret: an echo of the whole header, base64'd, holds the secret base64'd twice).
 */
export function secretForms(value: string, base64Only = false): Buffer[] {
  const bytes = Buffer.from(value, 'utf8');
  const json = JSON.stringify(value).slice(1, -1);
  const texts = new Set<string>();
  if (!base64Only) {
    for (const text of [
      encodeURIComponent(value),
      formEncoded(value),
      json,
      json.replace(/\//g, '\\/'),
      asciiJson(json),
      asciiJson(json).replace(/\//g, '\\/'),
    ]) {
      texts.add(text);
      texts.add(lowerHex(text));
    }
    texts.add(bytes.toString('hex'));
    texts.add(bytes.toString('hex').toUpperCase());
  }
  texts.add(bytes.toString('base64'));
  texts.add(bytes.toString('base64url'));
  for (const offset of [0, 1, 2] as const) {
    for (const urlSafe of [false, true]) {
      const core = base64Core(bytes, offset, urlSafe);
      if (core.length >= MIN_FORM_BYTES) texts.add(core);
    }
  }
  const forms = new Map<string, Buffer>(base64Only ? [] : [[bytes.toString('hex'), bytes]]);
  for (const text of texts) if (text) forms.set(Buffer.from(text, 'utf8').toString('hex'), Buffer.from(text, 'utf8'));
  return [...forms.values()].sort((a, b) => b.length - a.length);
}

/** Masks every secret form in answers of one intercepted request. */
export class ResponseScrubber {
  private readonly forms: Buffer[];

  /** `values`: the secrets, in every form; `carriers`: texts that hold one (a header sent upstream), in base64 forms only. */
  constructor(values: readonly string[], carriers: readonly string[] = []) {
    const unique = new Map<string, Buffer>();
    for (const value of values) for (const form of secretForms(value)) unique.set(form.toString('latin1'), form);
    for (const carrier of carriers) for (const form of secretForms(carrier, true)) unique.set(form.toString('latin1'), form);
    this.forms = [...unique.values()].sort((a, b) => b.length - a.length);
  }

  /** Whether there is anything to mask (no secret value: answers pass as they are). */
  get active(): boolean {
    return this.forms.length > 0;
  }

  /** A header name or value, or a status text (Node gives them as latin1 strings), with every form masked. */
  text(text: string): string {
    if (!this.active) return text;
    const bytes = Buffer.from(text, 'latin1');
    return maskAll(bytes, this.forms) ? bytes.toString('latin1') : text;
  }

  /** Header names and values (Node's rawHeaders layout), each masked. */
  headers(rawHeaders: readonly string[]): string[] {
    return rawHeaders.map((item) => this.text(item));
  }

  /** A transform that masks every form in the bytes that flow through it, holding back only a possible start of one. */
  stream(): Transform {
    return new ScrubbingStream(this.forms);
  }
}

/** Where each form occurs in `bytes` (found in the unmasked bytes: forms may overlap). */
function matches(bytes: Buffer, forms: readonly Buffer[]): [number, number][] {
  const found: [number, number][] = [];
  for (const form of forms) {
    for (let at = bytes.indexOf(form); at !== -1; at = bytes.indexOf(form, at + 1)) found.push([at, at + form.length]);
  }
  return found;
}

/** Masks, in place, every occurrence of every form; whether it masked anything. */
function maskAll(bytes: Buffer, forms: readonly Buffer[]): boolean {
  const found = matches(bytes, forms);
  for (const [start, end] of found) bytes.fill(MASK, start, end);
  return found.length > 0;
}

/** How many bytes at the end of `bytes` are the beginning (not the whole) of some form: those must wait for more. */
function heldBack(bytes: Buffer, forms: readonly Buffer[]): number {
  let held = 0;
  for (const form of forms) {
    const longest = Math.min(form.length - 1, bytes.length);
    if (longest <= held) continue;
    let at = bytes.indexOf(form[0]!, bytes.length - longest);
    while (at !== -1 && bytes.length - at > held) {
      if (bytes.compare(form, 0, bytes.length - at, at) === 0) {
        held = bytes.length - at;
        break;
      }
      at = bytes.indexOf(form[0]!, at + 1);
    }
  }
  return held;
}

class ScrubbingStream extends Transform {
  /** Bytes held back, as they came (unmasked, so that a form overlapping an earlier match is still found). */
  private pending = Buffer.alloc(0);
  /** Ranges of `pending` that earlier matches masked. */
  private pendingMasks: [number, number][] = [];

  constructor(private readonly forms: readonly Buffer[]) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const data = Buffer.concat([this.pending, chunk]);
    const masks = [...this.pendingMasks, ...matches(data, this.forms)];
    const cut = data.length - heldBack(data, this.forms);
    const out = Buffer.from(data.subarray(0, cut));
    for (const [start, end] of masks) if (start < cut) out.fill(MASK, start, Math.min(end, cut));
    this.pending = Buffer.from(data.subarray(cut));
    this.pendingMasks = masks.filter(([, end]) => end > cut).map(([start, end]) => [Math.max(start, cut) - cut, end - cut]);
    if (out.length > 0) this.push(out);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    const rest = Buffer.from(this.pending);
    for (const [start, end] of this.pendingMasks) rest.fill(MASK, start, end);
    if (rest.length > 0) this.push(rest);
    callback();
  }
}
