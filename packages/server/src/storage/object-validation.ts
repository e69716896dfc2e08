/**
 * What every object store accepts, defined once so that a key the local store takes is one S3 takes too, and
 * the other way round. A bad key, prefix or content type is a programming error (callers build keys from ids):
 * it throws at once, before any I/O.
 */

/** Longest key, in characters (S3 allows 1024 bytes, SANDBOXD_S3_PREFIX's at most 256 included). */
export const MAX_OBJECT_KEY_LENGTH = 512;

/** A segment is a file name in the local store: at most NAME_MAX (255) bytes. */
const SEGMENT = /^[A-Za-z0-9._-]{1,255}$/;

function badSegment(segment: string): boolean {
  // "." and ".." would name another directory on disk; an empty segment ("a//b", "/a", "a/") none at all.
  return !SEGMENT.test(segment) || segment === '.' || segment === '..';
}

/**
 * Throws unless `key` is relative, `/`-separated, of `[A-Za-z0-9._-]` segments of at most 255 characters (no `.`,
 * `..` or empty ones), ≤ 512 characters in all.
 */
export function assertObjectKey(key: string): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_OBJECT_KEY_LENGTH || key.split('/').some(badSegment)) {
    throw new Error(
      `bad object key ${JSON.stringify(key)}: use 1-${MAX_OBJECT_KEY_LENGTH} characters of /-separated segments of 1-255 characters [A-Za-z0-9._-], none of them "." or ".."`,
    );
  }
}

/**
 * Throws unless `prefix` is empty or a key, optionally followed by `/`. A prefix matches keys that start with it
 * as text, as S3's does: `shots/a` matches `shots/a/1.png` and `shots/ab/1.png`, `shots/a/` only the first.
 */
export function assertObjectPrefix(prefix: string): void {
  if (prefix === '') return;
  try {
    assertObjectKey(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix);
  } catch {
    throw new Error(`bad object prefix ${JSON.stringify(prefix)}: use "" or a key, optionally followed by "/"`);
  }
}

/** Throws unless `contentType` can travel as an HTTP header value (S3 sends it back as one). */
export function assertContentType(contentType: string): void {
  if (typeof contentType !== 'string' || !/^[\x21-\x7e][\x20-\x7e]{0,254}$/.test(contentType)) {
    throw new Error(`bad content type ${JSON.stringify(contentType)}: use 1-255 printable ASCII characters, such as image/png`);
  }
}
