/**
 * What of an upstream's answer reaches the guest when the vault masks secrets in answers: the headers masked, and
 * a compressed body decoded first so the scrubber sees its plaintext. A body in a coding that cannot be decoded
 * cannot be checked, so it is not relayed at all.
 */
import type { Transform } from 'node:stream';
import zlib from 'node:zlib';
import type { AnswerScrubber } from '../../core/vault/vault-ports.ts';

/** Decoders for a Content-Encoding list (last applied, first undone); null when one is not known. */
function decodersFor(contentEncoding: string): Transform[] | null {
  const codings = contentEncoding
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  const decoders: Transform[] = [];
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip') decoders.push(zlib.createGunzip());
    else if (coding === 'deflate') decoders.push(zlib.createInflate());
    else if (coding === 'br') decoders.push(zlib.createBrotliDecompress());
    else return null;
  }
  return decoders;
}

/** Whether an answer to `method` with `status` has a body (RFC 9110 §6.4.1). */
function hasBody(method: string, status: number): boolean {
  return method !== 'HEAD' && status !== 204 && status !== 304 && status >= 200;
}

/** The value of the first header `name` (lower case) in rawHeaders. */
export function headerValue(rawHeaders: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === name) return rawHeaders[i + 1];
  return undefined;
}

/**
 * What of an upstream answer goes to the guest when secrets are masked: its headers (masked; the encoding and
 * length dropped when the body is decoded) and the stages its body passes through. Null when the body is
 * compressed in a way that cannot be decoded (it could not be checked, so it is not relayed).
 */
export function scrubbedAnswer(
  scrubber: AnswerScrubber | undefined,
  method: string,
  status: number,
  rawHeaders: string[],
): { rawHeaders: string[]; stages: Transform[] } | null {
  if (!scrubber?.active) return { rawHeaders, stages: [] };
  const encoding = headerValue(rawHeaders, 'content-encoding');
  let decoders: Transform[] = [];
  let kept = rawHeaders;
  if (encoding !== undefined && hasBody(method, status)) {
    const found = decodersFor(encoding);
    if (found === null) return null;
    decoders = found;
    // The body is sent decoded: its coding and length are the upstream's, not the guest's.
    if (decoders.length > 0) kept = rawHeaders.filter((_, i, all) => !['content-encoding', 'content-length'].includes(all[i - (i % 2)]!.toLowerCase()));
  }
  return { rawHeaders: kept.map((item) => scrubber.text(item)), stages: [...decoders, scrubber.stream()] };
}
