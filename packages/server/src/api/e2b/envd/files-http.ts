/**
 * envd's HTTP file transfer (`GET /files` download, `POST /files` upload; E2B's spec/envd/envd.yaml) over sandboxd's
 * files (core/files.ts), streamed both ways: nothing is held whole here. `username` (the SDK sends it only when the
 * caller names an account; `user` otherwise) decides what a relative path is relative to (its home) and who owns
 * what is written. An upload is `multipart/form-data` with one or several `file` parts (each named by its path when
 * the query names none) or `application/octet-stream` (gzip allowed) with the path in the query. Errors are envd's
 * `{code, message}` (the daemon plugin's error handler); a missing file is 404, which the SDK raises as
 * `FileNotFoundError`.
 */
import path from 'node:path/posix';
import { PassThrough, Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../../../core/errors.ts';
import type { Services } from '../../../services.ts';
import { DEFAULT_USER } from '../wire.ts';
import { absolutePathFor } from './entry-info.ts';

/** Files one multipart upload may carry. */
const MAX_FILES_PER_UPLOAD = 1000;
const ACCOUNT_NAME = /^[a-z_][a-z0-9_-]{0,31}$/;

/** What envd answers for each written file. */
interface WrittenEntry {
  name: string;
  type: 'file';
  path: string;
}

interface FilesQuery {
  path?: string;
  username?: string;
}

function queryOf(request: FastifyRequest): FilesQuery {
  const query = request.query as Record<string, unknown>;
  const text = (name: string) => {
    const value = query[name];
    if (value === undefined || value === '') return undefined;
    if (typeof value !== 'string') throw new AppError('BAD_REQUEST', `give query parameter ${name} once`);
    if (value.includes('\0')) throw new AppError('BAD_REQUEST', `${name} contains a NUL byte`);
    return value;
  };
  return { path: text('path'), username: text('username') };
}

/** The account a request acts as: `username`, or E2B's default. */
function accountOf(query: FilesQuery): string {
  const user = query.username ?? DEFAULT_USER;
  if (!ACCOUNT_NAME.test(user)) throw new AppError('BAD_REQUEST', `invalid username ${JSON.stringify(user)}`);
  return user;
}

/** `body`, failing with a 413 once more than `limitBytes` passed (the write in the VM is then abandoned). */
function limited(body: Readable, limitBytes: number): Readable {
  let seen = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limitBytes) callback(new AppError('PAYLOAD_TOO_LARGE', `the file is over the upload limit of ${limitBytes} bytes`));
      else callback(null, chunk);
    },
  });
  body.once('error', (error) => counter.destroy(error));
  return body.pipe(counter);
}

/** A request body as the bytes of one file: gunzipped when it says it is gzip (the SDK's `gzip` option). */
function octetBody(request: FastifyRequest): Readable {
  const encoding = String(request.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding === 'identity') return request.raw;
  if (encoding !== 'gzip') throw new AppError('UNSUPPORTED_MEDIA_TYPE', `Content-Encoding ${encoding} is not supported (send gzip or none)`);
  const gunzip = createGunzip();
  request.raw.once('error', (error) => gunzip.destroy(error));
  gunzip.once('error', () => undefined);
  return request.raw.pipe(gunzip);
}

/** Writes the files of an upload request in the VM; what envd answers for them. */
async function receiveUpload(services: Services, request: FastifyRequest): Promise<WrittenEntry[]> {
  const { principal, session } = request.e2bCaller!;
  const limitBytes = services.config.execution.uploadLimitBytes;
  const query = queryOf(request);
  const user = accountOf(query);
  const write = async (given: string, body: Readable): Promise<WrittenEntry> => {
    const written = await services.sandbox.files.upload(principal, session.id, {
      remotePath: absolutePathFor(given, user),
      filename: null,
      recursive: false,
      body: limited(body, limitBytes),
      owner: user,
    });
    return { name: path.basename(written.path), type: 'file', path: written.path };
  };

  const type = String(request.headers['content-type'] ?? '').toLowerCase();
  if (type.startsWith('application/octet-stream')) {
    if (!query.path) throw new AppError('BAD_REQUEST', 'give the path of the file to write');
    return [await write(query.path, octetBody(request))];
  }
  if (!request.isMultipart()) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'send the file as multipart/form-data or application/octet-stream');

  const written: WrittenEntry[] = [];
  for await (const part of request.parts()) {
    if (part.type !== 'file') continue;
    const given = query.path ?? part.filename;
    if (!given || (written.length > 0 && query.path)) {
      part.file.resume();
      throw new AppError('BAD_REQUEST', query.path ? 'the query names one path: send one file, or name each by its part' : 'name each file part by its path');
    }
    // pipe(), not pipeline(): a failure in the VM must not be taken for one of the body. A part past the size limit
    // fails its write (busboy truncates it and says so).
    const body = part.file.pipe(new PassThrough());
    part.file.once('limit', () => body.destroy(new AppError('PAYLOAD_TOO_LARGE', `the file is over the upload limit of ${limitBytes} bytes`)));
    part.file.once('error', (error) => body.destroy(error));
    written.push(await write(given, body));
  }
  if (written.length === 0) throw new AppError('BAD_REQUEST', 'the upload holds no file part');
  return written;
}

/** Registers `GET /files` and `POST /files` in the daemon's plugin (so its hook admits them first). */
export function registerFilesHttp(daemon: FastifyInstance, services: Services): void {
  const files = services.sandbox.files;
  const limitBytes = services.config.execution.uploadLimitBytes;

  void daemon.register(async (scope) => {
    // Bodies are streamed to the VM, never parsed here: octet-stream stays unread for the handler, multipart is
    // read part by part.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
    // preservePath: a part's file name is the path it goes to (the SDK's multi-file write), not just its base name.
    await scope.register(multipart, { preservePath: true, limits: { fileSize: limitBytes, files: MAX_FILES_PER_UPLOAD, parts: MAX_FILES_PER_UPLOAD + 20 } });

    scope.get('/files', { schema: { hide: true } }, async (request, reply) => {
      const { principal, session } = request.e2bCaller!;
      const query = queryOf(request);
      if (!query.path) throw new AppError('BAD_REQUEST', 'give the path of the file to read');
      const target = absolutePathFor(query.path, accountOf(query));
      const file = await files.download(principal, session.id, target);
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', String(file.size))
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(path.basename(file.path))}`)
        .send(file.stream);
    });

    scope.post('/files', { schema: { hide: true } }, async (request, reply) => {
      try {
        return reply.send(await receiveUpload(services, request));
      } catch (error) {
        // Refused before the body was read through: the rest is read and dropped, or a client still sending it never
        // reads the answer and its connection stays stuck (the server stopped reading, the client cannot finish).
        request.raw.unpipe();
        request.raw.resume();
        throw error;
      }
    });
  });
}
