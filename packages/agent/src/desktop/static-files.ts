/**
 * Serves the noVNC viewer's files (Debian's `novnc` package, /usr/share/novnc) on the viewer port, which the
 * host's preview proxy reaches as `/v1/app/{session_id}/6080/vnc.html`. Read-only, GET and HEAD, nothing
 * outside the directory (Debian links some of its scripts to /usr/share/javascript: those links are followed,
 * since only the requested path, normalized, is checked against the root).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.ttf': 'font/ttf',
  '.oga': 'audio/ogg',
  '.ogg': 'audio/ogg',
  '.mp3': 'audio/mpeg',
};

export function serveStatic(root: string): (request: IncomingMessage, response: ServerResponse) => void {
  return (request, response) => {
    void (async () => {
      if (request.method !== 'GET' && request.method !== 'HEAD') {
        response.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain' }).end('method not allowed\n');
        return;
      }
      let path: string;
      try {
        path = decodeURIComponent(new URL(request.url ?? '/', 'http://viewer').pathname);
      } catch {
        response.writeHead(400, { 'content-type': 'text/plain' }).end('bad path\n');
        return;
      }
      if (path.endsWith('/')) path += 'vnc.html';
      const file = normalize(join(root, path));
      if (!file.startsWith(root.endsWith(sep) ? root : root + sep) || path.includes('\0')) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      const info = await stat(file).catch(() => null);
      if (!info?.isFile()) {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      response.writeHead(200, {
        'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
        'content-length': info.size,
        'cache-control': 'no-cache',
        'x-content-type-options': 'nosniff',
      });
      if (request.method === 'HEAD') response.end();
      else
        createReadStream(file)
          .on('error', () => response.destroy())
          .pipe(response);
    })().catch(() => response.destroy());
  };
}
