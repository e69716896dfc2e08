/**
 * How the console may show each format of a Python run's rich result, decided without the DOM: which images are
 * what they claim to be, the document a sandboxed frame gets for HTML and SVG, and what is shown as text.
 */
import type { RichResult } from '../../api-types.ts';

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** How each image format's base64 begins (its magic bytes: \x89PNG\r\n\x1a\n, and JPEG's FF D8 FF). */
const IMAGE_PREFIXES = { png: 'iVBORw0KGgo', jpeg: '/9j/' } as const;

/** A data URL of the image when `base64` really is base64 of that format, else null. */
export function imageDataUrl(format: 'png' | 'jpeg', base64: string | undefined): string | null {
  if (!base64) return null;
  const compact = base64.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !BASE64.test(compact) || !compact.startsWith(IMAGE_PREFIXES[format])) return null;
  return `data:image/${format};base64,${compact}`;
}

/**
 * The document of the sandboxed frame. Its own policy blocks every fetch (images other than inline ones, styles
 * from elsewhere, frames): a table cannot call home nor reach the API with anything the browser would attach.
 */
export function sandboxDocument(body: string): string {
  return [
    '<!doctype html><html><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    '<style>body{font:14px system-ui,sans-serif;margin:0.5rem;color:#1b1f24}table{border-collapse:collapse}',
    'th,td{border:1px solid #d0d7de;padding:0.2rem 0.5rem;text-align:right}th{background:#f6f8fa}</style>',
    `</head><body>${body}</body></html>`,
  ].join('');
}

/** A result's text form: Markdown, LaTeX and JSON as their source, else its repr. */
export function resultText(result: RichResult): string | null {
  if (result.markdown) return result.markdown;
  if (result.latex) return result.latex;
  if (result.json !== undefined) return JSON.stringify(result.json, null, 2);
  return result.text ?? null;
}

/** Formats shown other than as the value's repr (a PDF or JavaScript is never shown: its text stands for it). */
const SHOWN_FORMATS = ['png', 'jpeg', 'html', 'svg', 'markdown', 'latex', 'json'] as const;

/** Whether a result gets a box of its own: the last value's plain text is already in stdout, as a notebook prints it. */
export function showsOnItsOwn(result: RichResult): boolean {
  return !result.is_main_result || SHOWN_FORMATS.some((format) => result[format] !== undefined);
}
