/** Base64 runs of `text` (either alphabet, any start offset) whose decoding holds `needle`, also base64 in base64. */
function inBase64(text: string, needle: string, depth: number): string[] {
  const found: string[] = [];
  for (const blob of text.match(/[A-Za-z0-9+/_-]{8,}={0,2}/g) ?? []) {
    for (const alphabet of ['base64', 'base64url'] as const) {
      // Every start offset: a blob cut out of a longer one may begin mid-group.
      for (let skip = 0; skip < 4; skip++) {
        const decoded = Buffer.from(blob.slice(skip), alphabet).toString('latin1');
        if (decoded.includes(needle) || (depth > 1 && inBase64(decoded, needle, depth - 1).length > 0)) {
          found.push(`${alphabet} in ${blob.slice(0, 40)}`);
          break;
        }
      }
    }
  }
  return found;
}

/**
 * Whether some text gives a secret value away: the value as it is, URL-encoded, JSON-escaped or hex, or inside any
 * base64 (standard or URL-safe) run that decodes to text holding it (echoed Basic credentials, a JWT-like blob),
 * also base64 of base64 (an echo of a whole `Authorization: Basic …` header, base64'd).
 * For the vault tests, which look at everything a guest received.
 */
export function secretLeaks(output: string, value: string): string[] {
  const found: string[] = [];
  const json = JSON.stringify(value).slice(1, -1);
  const forms: [string, string][] = [
    ['raw', value],
    ['url-encoded', encodeURIComponent(value)],
    ['url-encoded (lower-case hex)', encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase())],
    ['form-encoded', new URLSearchParams({ v: value }).toString().slice(2)],
    ['json', json],
    ['json (escaped /)', json.replace(/\//g, '\\/')],
    ['json (ASCII)', json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)],
    ['hex', Buffer.from(value).toString('hex')],
  ];
  for (const [name, form] of forms) if (output.toLowerCase().includes(form.toLowerCase()) && (name !== 'hex' || form.length > 0)) found.push(name);
  for (const where of inBase64(output, Buffer.from(value).toString('latin1'), 2)) found.push(where);
  return [...new Set(found)];
}
