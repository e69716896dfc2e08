/**
 * The PTY routes: create, list, inspect, resize and kill terminals (JSON), and attach to one (a full-duplex
 * framed stream: input and resizes in, scrollback, live output and the exit out).
 */
import type { ServerHttp2Stream } from 'node:http2';
import { AgentFailure } from '../http/agent-failure.ts';
import { replyJson } from '../http/reply.ts';
import { optionalInteger, optionalString, optionalStringMap, parseJsonObject, readJsonBody, requireString } from '../http/request-body.ts';
import type { RouteRequest } from '../http/router.ts';
import { encodeFrame, encodeJsonFrame, FrameType, readFrames } from '../protocol/frames.ts';
import type { PtyCreateRequest, PtyListResponse } from '../protocol/messages.ts';
import type { TerminalRegistry } from './terminal-registry.ts';

const MAX_DIMENSION = 1000;
const MIN_SCROLLBACK_BYTES = 1024;
const MAX_SCROLLBACK_BYTES = 1024 * 1024;
/**
 * Output an attached stream may have queued (the host not reading fast enough) before it is detached: the
 * program is never held back by a slow viewer, and the viewer can re-attach to get the scrollback.
 */
const MAX_QUEUED_OUTPUT_BYTES = 4 * 1024 * 1024;

function requireDimension(body: Record<string, unknown>, field: 'cols' | 'rows'): number {
  const value = optionalInteger(body, field, 1, MAX_DIMENSION);
  if (value === undefined) throw new AgentFailure('BAD_REQUEST', `"${field}" is required`);
  return value;
}

function parseCreate(body: Record<string, unknown>): PtyCreateRequest {
  const argv = body.argv;
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((part) => typeof part === 'string')) {
    throw new AgentFailure('BAD_REQUEST', '"argv" must be a non-empty array of strings');
  }
  const env = optionalStringMap(body, 'env');
  const strings = [...(argv as string[]), ...Object.entries(env ?? {}).flat()];
  if (strings.some((value) => value.includes('\0'))) throw new AgentFailure('BAD_REQUEST', 'arguments and environment must not contain NUL bytes');
  const request: PtyCreateRequest = { argv: argv as string[], cols: requireDimension(body, 'cols'), rows: requireDimension(body, 'rows') };
  if (env) request.env = env;
  const cwd = optionalString(body, 'cwd');
  if (cwd !== undefined) request.cwd = cwd;
  const scrollbackBytes = optionalInteger(body, 'scrollbackBytes', MIN_SCROLLBACK_BYTES, MAX_SCROLLBACK_BYTES);
  if (scrollbackBytes !== undefined) request.scrollbackBytes = scrollbackBytes;
  return request;
}

function requireIdParam(url: URL): string {
  const id = url.searchParams.get('id');
  if (!id) throw new AgentFailure('BAD_REQUEST', 'the "id" query parameter is required');
  return id;
}

/** The JSON routes, keyed by route name. */
export function createPtyRoutes(terminals: TerminalRegistry) {
  return {
    create: async ({ stream }: RouteRequest) => {
      const terminal = await terminals.create(parseCreate(await readJsonBody(stream)));
      replyJson(stream, 200, terminal.info());
    },
    list: ({ stream }: RouteRequest) => {
      const answer: PtyListResponse = { terminals: terminals.list() };
      replyJson(stream, 200, answer);
    },
    info: ({ stream, url }: RouteRequest) => {
      replyJson(stream, 200, terminals.get(requireIdParam(url)).info());
    },
    resize: async ({ stream }: RouteRequest) => {
      const body = await readJsonBody(stream);
      const terminal = terminals.get(requireString(body, 'id'));
      terminal.resize(requireDimension(body, 'cols'), requireDimension(body, 'rows'));
      replyJson(stream, 200, terminal.info());
    },
    kill: async ({ stream }: RouteRequest) => {
      const body = await readJsonBody(stream);
      replyJson(stream, 200, await terminals.kill(requireString(body, 'id')));
    },
    attach: ({ stream, url }: RouteRequest) => attach(stream, terminals, requireIdParam(url)),
  };
}

async function attach(stream: ServerHttp2Stream, terminals: TerminalRegistry, id: string): Promise<void> {
  const terminal = terminals.get(id);
  stream.respond({ ':status': 200, 'content-type': 'application/vnd.sandboxd.frames' });
  const cancel = (): void => {
    if (!stream.closed) stream.close(0x8 /* NGHTTP2_CANCEL */);
  };
  const detach = terminal.attach({
    onOutput: (chunk) => {
      if (stream.destroyed || stream.closed) return;
      if (stream.writableLength > MAX_QUEUED_OUTPUT_BYTES) {
        cancel();
        return;
      }
      stream.write(encodeFrame(FrameType.Stdout, chunk));
    },
    onExit: (exit) => {
      if (!stream.destroyed && !stream.closed) stream.end(encodeJsonFrame(FrameType.Exit, exit));
    },
  });
  stream.once('close', detach);
  try {
    for await (const frame of readFrames(stream)) {
      if (frame.type === FrameType.Stdin) {
        if (!terminal.write(frame.payload)) await terminal.inputDrained();
      } else if (frame.type === FrameType.Resize) {
        const body = parseJsonObject(frame.payload);
        terminal.resize(requireDimension(body, 'cols'), requireDimension(body, 'rows'));
      } else {
        throw new AgentFailure('BAD_REQUEST', `unexpected frame type ${frame.type} on a terminal`);
      }
    }
  } catch {
    // A malformed frame or a reset stream: this attachment ends, the terminal keeps running.
    cancel();
  }
}
