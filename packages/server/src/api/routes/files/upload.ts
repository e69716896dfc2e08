/**
 * POST /upload and /v1/upload: multipart `file`, `remote_path`, `session_id`, `recursive` ("true" unpacks a
 * tar archive at remote_path), optional `api_key`. The file is streamed into the VM. When the file part
 * comes before the fields it depends on (clients choose the order), it is spooled to a temp file first.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { PassThrough, Transform, Writable, type Readable } from 'node:stream';
import multipart, { type Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { AppError, InputError } from '../../../core/errors.ts';
import type { Principal } from '../../../core/authenticator.ts';
import { notAuthenticated } from '../../../core/authenticator.ts';
import { anonymousBodyTooLarge } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY } from '../../schemas/common.ts';
import { GUEST_PATH_RULE, GuestPath, guestPathProblem } from '../../schemas/guest-path.ts';
import type { App, RouteContext } from '../../types.ts';

const UploadResponse = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  path: Type.String({ description: 'Absolute path in the VM' }),
  size: Type.Union([Type.Integer(), Type.Null()], { description: 'Bytes written (null for an unpacked archive)' }),
  recursive: Type.Boolean(),
  session_id: Type.String(),
  vm_id: Type.String(),
});

/**
 * The form, for the document: the route reads the parts as they stream in and checks them itself (the
 * route's validator accepts any body, since a multipart body is not parsed before the handler runs).
 */
const UploadForm = Type.Object({
  file: Type.String({ format: 'binary', description: 'The bytes; its filename names the file when remote_path is absent or ends with "/"' }),
  session_id: Type.String({ minLength: 1, maxLength: 64 }),
  remote_path: Type.Optional(GuestPath('Where to write it')),
  recursive: Type.Optional(
    Type.String({
      maxLength: 5,
      description: '"true" (or "1"): the file is a tar archive (gzip allowed) unpacked at remote_path; anything else writes it as one file',
    }),
  ),
  api_key: Type.Optional(Type.String({ description: 'The API key, for clients that send it in the form (send it before the file)' })),
});

/** Reads a part to its end, discarding it. */
const discard = () => new Writable({ write: (_chunk, _encoding, callback) => callback() });

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters (busboy fails beyond 252, with a 500 until this check). */
const BOUNDARY = /;\s*boundary=(?:"([^"]{1,70})"|([^\s";]{1,70}))\s*(;|$)/i;

/** The error for a part of the body busboy could not read: the client's fault unless it already has a status. */
function malformedBody(error: unknown): unknown {
  if (error instanceof AppError || error instanceof InputError) return error;
  const status = (error as { statusCode?: unknown }).statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) return error;
  return new AppError('BAD_REQUEST', `malformed multipart/form-data body: ${(error as Error).message ?? String(error)}`);
}

/** A 422 for a path the VM could not take (the file's name stands for it when remote_path is absent). */
function checkGuestPath(field: 'remote_path' | 'file', given: string): void {
  const problem = guestPathProblem(given);
  if (!problem) return;
  const what = field === 'file' ? `the path made of the file's name (${given.slice(0, 40)}…)` : 'remote_path';
  throw new InputError([{ loc: ['body', field], msg: `${what} ${problem}: give ${GUEST_PATH_RULE}`, type: 'value_error' }]);
}

/** The parts of a multipart request; a body busboy cannot read is a 400, not a 500. */
async function* partsOf(request: FastifyRequest): AsyncGenerator<Multipart> {
  let iterator: AsyncIterator<Multipart>;
  try {
    iterator = request.parts()[Symbol.asyncIterator]();
  } catch (error) {
    throw malformedBody(error);
  }
  for (;;) {
    let step: IteratorResult<Multipart>;
    try {
      step = await iterator.next();
    } catch (error) {
      throw malformedBody(error);
    }
    if (step.done) return;
    yield step.value;
  }
}

export function registerUpload(app: App, { services, headerAuthIfPresent }: RouteContext): void {
  const limit = services.config.execution.uploadLimitBytes;
  const anonymousLimit = services.config.server.unauthenticatedBodyLimitBytes;
  app.register(async (scope) => {
    await scope.register(multipart, { limits: { fileSize: limit, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 25 } });
    for (const url of ['/upload', '/v1/upload']) {
      scope.post(
        url,
        {
          schema: {
            tags: ['files'],
            summary: 'Upload a file into the VM (multipart)',
            description:
              `multipart/form-data with \`file\` (the bytes), \`session_id\`, \`remote_path\` (${GUEST_PATH_RULE}; a trailing "/" keeps the file's name; 422 otherwise), ` +
              `\`recursive\` ("true": the file is a tar archive, gzip allowed, unpacked at remote_path) and optionally \`api_key\`. Streamed; larger than ${limit} bytes answers 413.`,
            consumes: ['multipart/form-data'],
            body: UploadForm,
            security: BEARER_OR_API_KEY,
            response: authedResponses(
              { 200: UploadResponse },
              {
                400: 'Malformed multipart body (no boundary, truncated, garbled)',
                404: 'No such session among yours',
                413: 'File too large',
                415: 'Not multipart/form-data',
              },
            ),
          },
          // Header credentials are checked before the body is read; an api_key form field is checked when it
          // arrives, and until then at most SANDBOXD_UNAUTHENTICATED_BODY_LIMIT_BYTES of parts are read.
          onRequest: headerAuthIfPresent,
          validatorCompiler: () => () => true,
        },
        async (request, reply) => {
          if (!request.isMultipart()) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'send the file as multipart/form-data');
          if (!BOUNDARY.test(request.headers['content-type'] ?? '')) {
            throw new AppError('BAD_REQUEST', 'Content-Type multipart/form-data needs a boundary parameter of 1 to 70 characters (RFC 2046)');
          }
          const fields: Record<string, string> = {};
          let principal: Principal | null = request.principal;
          let spool: { file: string; dir: string; filename: string } | null = null;
          let result: Awaited<ReturnType<typeof upload>> | null = null;
          /** The first error of a file part's data (a truncated or garbled body), whatever its reader made of it. */
          let bodyFailure: unknown = null;
          let anonymousBytes = 0;
          const countAnonymous = (bytes: number): Error | null => {
            if (principal) return null;
            anonymousBytes += bytes;
            return anonymousBytes > anonymousLimit ? anonymousBodyTooLarge(anonymousLimit) : null;
          };
          /** Passes a part through, counting its bytes while the request is anonymous. */
          const anonymousCounter = () => new Transform({ transform: (chunk: Buffer, _encoding, callback) => callback(countAnonymous(chunk.length), chunk) });

          const ready = () => principal !== null && fields.session_id !== undefined && (fields.remote_path !== undefined || fields.recursive !== 'true');
          const upload = (body: Readable, filename: string) => {
            const session_id = fields.session_id!;
            const remotePath = fields.remote_path ?? filename;
            const recursive = fields.recursive === 'true' || fields.recursive === '1';
            // Checked before anything reaches the VM; a directory path takes the file's own name.
            checkGuestPath(fields.remote_path === undefined ? 'file' : 'remote_path', remotePath);
            if (!recursive && remotePath.endsWith('/')) checkGuestPath('file', path.posix.join(remotePath, path.posix.basename(filename)));
            return services.sandbox.files.upload(principal!, session_id, { remotePath, filename, recursive, body });
          };

          try {
            for await (const part of partsOf(request)) {
              if (part.type === 'field') {
                fields[part.fieldname] = String(part.value);
                const tooMuch = countAnonymous(Buffer.byteLength(fields[part.fieldname]!));
                if (tooMuch) throw tooMuch;
                if (part.fieldname === 'api_key' && !principal) principal = await services.authenticator.authenticate(fields.api_key!.trim(), 'api_key field');
                continue;
              }
              part.file.once('error', (error) => (bodyFailure ??= error));
              if (part.fieldname !== 'file' || result || spool) {
                await pipeline(part.file, anonymousCounter(), discard());
                continue;
              }
              if (ready()) {
                // pipe(), not pipeline(): a failure downstream (the VM) must not be taken for one of the body.
                const body = part.file.pipe(new PassThrough());
                part.file.once('error', (error) => body.destroy(error));
                body.on('error', () => undefined); // recorded in bodyFailure; the VM may not be reading it (yet)
                result = await upload(body, part.filename);
              } else {
                const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-upload-'));
                spool = { dir, file: path.join(dir, 'body'), filename: part.filename };
                await pipeline(part.file, anonymousCounter(), fs.createWriteStream(spool.file, { mode: 0o600 }));
              }
            }
            if (!principal) throw notAuthenticated();
            request.principal = principal;
            if (!result) {
              const missing = ['file', 'session_id'].filter((f) => (f === 'file' ? !spool : fields[f] === undefined));
              if (missing.length > 0) throw new InputError(missing.map((f) => ({ loc: ['body', f], msg: 'Field required', type: 'missing' })));
              // Opened before the checks in upload() run: if they refuse, the spool is removed while the stream is
              // still opening, and its ENOENT must not go unheard (an uncaught 'error' ends the process).
              const spooled = fs.createReadStream(spool!.file);
              spooled.on('error', () => undefined);
              try {
                result = await upload(spooled, spool!.filename);
              } finally {
                spooled.destroy();
              }
            }
          } catch (error) {
            // The rest of the body is not wanted: close the connection after the answer rather than read it.
            if (!request.raw.complete) reply.header('connection', 'close');
            throw bodyFailure ? malformedBody(bodyFailure) : error;
          } finally {
            if (spool) fs.rmSync(spool.dir, { recursive: true, force: true });
          }
          const { path: written, size, recursive, vmId } = result;
          return {
            success: true,
            message: recursive ? `archive unpacked at ${written}` : `${size} bytes written to ${written}`,
            path: written,
            size,
            recursive,
            session_id: fields.session_id!,
            vm_id: vmId,
          };
        },
      );
    }
  });
}
