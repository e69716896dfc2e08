/**
 * The computer-use API, served on the guest's loopback and reached from the host through the agent's tunnel
 * (`/v1/computeruse/{session_id}/{path}` on the server). JSON in and out, except screenshots (PNG) and
 * recording downloads (MP4). Input actions run one at a time, in arrival order: two clients' clicks never
 * interleave their presses and releases.
 */
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidAction, planAction, type ScreenSize } from './actions.ts';
import { encodePng, scaleImage } from './png.ts';
import { RecordingConflict, type Recorder } from './recorder.ts';
import { MAX_SCREEN_HEIGHT, MAX_SCREEN_WIDTH, MIN_SCREEN, type Screen } from './screen.ts';
import { ToolError } from './run.ts';

const MAX_BODY_BYTES = 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' }).end(text);
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'PAYLOAD_TOO_LARGE', `the body is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new InvalidAction(['body'], 'the body is not valid JSON');
  }
}

/** A positive number query parameter, or undefined when absent. */
function numberParam(url: URL, name: string, min: number, max: number, integer: boolean): number | undefined {
  const raw = url.searchParams.get(name);
  if (raw === null) return undefined;
  const value = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(value) || value < min || value > max || (integer && !Number.isInteger(value))) {
    throw new InvalidAction(['query', name], `${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
  }
  return value;
}

/** The methods a path of this API takes (none: no such path). */
function allowedMethods(path: string): string[] {
  if (/^\/recordings\/[^/]+\/download$/.test(path)) return ['GET'];
  if (/^\/recordings\/[^/]+$/.test(path)) return ['GET', 'DELETE'];
  const table: Record<string, string[]> = {
    '/': ['GET'],
    '/health': ['GET'],
    '/screenshot': ['GET'],
    '/action': ['POST'],
    '/cursor': ['GET'],
    '/display': ['GET', 'PUT'],
    '/windows': ['GET'],
    '/recording/start': ['POST'],
    '/recording/stop': ['POST'],
    '/recordings': ['GET'],
  };
  return table[path] ?? [];
}

export class DesktopApi {
  /** Input actions, one after another. */
  private inputTail: Promise<unknown> = Promise.resolve();
  private screenSize: ScreenSize | null = null;

  constructor(
    private readonly screen: Screen,
    private readonly recorder: Recorder,
  ) {}

  /** Node's request listener. */
  readonly handle = (request: IncomingMessage, response: ServerResponse): void => {
    this.route(request, response).catch((error: unknown) => {
      if (response.headersSent) {
        response.destroy();
        return;
      }
      if (error instanceof InvalidAction) send(response, 422, { detail: [{ loc: error.loc, msg: error.message, type: 'value_error' }] });
      else if (error instanceof HttpError) send(response, error.status, { detail: error.message, code: error.code });
      else if (error instanceof RecordingConflict) send(response, 409, { detail: error.message, code: 'CONFLICT' });
      else if (error instanceof ToolError) send(response, 500, { detail: error.message, code: 'DESKTOP_ERROR' });
      else send(response, 500, { detail: `the desktop service failed: ${(error as Error).message}`, code: 'DESKTOP_ERROR' });
    });
  };

  private async size(): Promise<ScreenSize> {
    this.screenSize ??= await this.screen.size();
    return this.screenSize;
  }

  private input<T>(work: () => Promise<T>): Promise<T> {
    const run = this.inputTail.then(work, work);
    this.inputTail = run.catch(() => undefined);
    return run;
  }

  private async route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://desktop');
    const method = request.method ?? 'GET';
    const path = url.pathname.replace(/\/+$/, '') || '/';
    const recording = /^\/recordings\/([^/]+)(\/download)?$/.exec(path);

    if (method === 'GET' && (path === '/' || path === '/health')) {
      send(response, 200, { status: 'ok', screen: await this.size(), recording: this.recorder.current()?.id ?? null });
    } else if (method === 'GET' && path === '/screenshot') {
      const png = await this.screenshot(url);
      response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length, 'cache-control': 'no-store' }).end(png);
    } else if (method === 'POST' && path === '/action') {
      send(response, 200, await this.action(await readJson(request)));
    } else if (method === 'GET' && path === '/cursor') {
      send(response, 200, await this.screen.cursor());
    } else if (method === 'GET' && path === '/display') {
      send(response, 200, await this.size());
    } else if (method === 'PUT' && path === '/display') {
      send(response, 200, await this.resize(await readJson(request)));
    } else if (method === 'GET' && path === '/windows') {
      send(response, 200, { windows: await this.screen.windows() });
    } else if (method === 'POST' && path === '/recording/start') {
      const body = (await readJson(request)) as { framerate?: unknown };
      const framerate = body.framerate ?? 5;
      if (!Number.isInteger(framerate) || (framerate as number) < 1 || (framerate as number) > 30) {
        throw new InvalidAction(['body', 'framerate'], 'framerate must be an integer from 1 to 30 (frames per second)');
      }
      send(response, 200, await this.recorder.start(await this.size(), framerate as number));
    } else if (method === 'POST' && path === '/recording/stop') {
      send(response, 200, await this.recorder.stop());
    } else if (method === 'GET' && path === '/recordings') {
      send(response, 200, { recordings: this.recorder.list() });
    } else if (recording && (method === 'GET' || method === 'DELETE')) {
      const id = recording[1]!;
      const found = this.recorder.isValidId(id) ? this.recorder.get(id) : null;
      if (!found) throw new HttpError(404, 'NOT_FOUND', `recording ${id} not found`);
      if (method === 'DELETE') {
        if (recording[2]) throw new HttpError(405, 'METHOD_NOT_ALLOWED', 'DELETE /recordings/{id}, not its download');
        await this.recorder.delete(id);
        send(response, 200, { ...found, deleted: true });
      } else if (!recording[2]) {
        send(response, 200, found);
      } else {
        if (found.status !== 'ready') throw new HttpError(409, 'CONFLICT', `recording ${id} is ${found.status}: only a finished recording downloads`);
        response.writeHead(200, {
          'content-type': 'video/mp4',
          'content-length': found.size_bytes ?? undefined,
          'content-disposition': `attachment; filename="${id}.mp4"`,
        } as Record<string, string | number>);
        createReadStream(this.recorder.pathOf(id))
          .on('error', () => response.destroy())
          .pipe(response);
      }
    } else {
      const allowed = allowedMethods(path);
      if (allowed.length === 0) throw new HttpError(404, 'NOT_FOUND', `no route ${path} in the computer-use API`);
      response.setHeader('allow', allowed.join(', '));
      if (method === 'OPTIONS') {
        response.writeHead(204).end();
        return;
      }
      throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${path} takes ${allowed.join(', ')}, not ${method}`);
    }
  }

  /** The screen as PNG; `scale` (0.05–1) or `width`/`height` (one keeps the aspect ratio) shrink it. */
  private async screenshot(url: URL): Promise<Buffer> {
    const scale = numberParam(url, 'scale', 0.05, 1, false);
    const width = numberParam(url, 'width', 16, MAX_SCREEN_WIDTH, true);
    const height = numberParam(url, 'height', 16, MAX_SCREEN_HEIGHT, true);
    const image = await this.screen.capture();
    let target = { width: image.width, height: image.height };
    if (scale !== undefined) target = { width: Math.max(1, Math.round(image.width * scale)), height: Math.max(1, Math.round(image.height * scale)) };
    else if (width !== undefined || height !== undefined) {
      target = {
        width: width ?? Math.max(1, Math.round((image.width * height!) / image.height)),
        height: height ?? Math.max(1, Math.round((image.height * width!) / image.width)),
      };
    }
    return encodePng(scaleImage(image, target.width, target.height));
  }

  private async action(body: unknown): Promise<Record<string, unknown>> {
    const started = performance.now();
    const plan = planAction(body, await this.size());
    const action = (body as { action: string }).action;
    const result: Record<string, unknown> = { action };
    if (plan.kind === 'screenshot') {
      const scale = (body as { scale?: unknown }).scale;
      const url = new URL('http://desktop/screenshot');
      if (scale !== undefined) url.searchParams.set('scale', String(scale));
      result.base64_image = (await this.screenshot(url)).toString('base64');
      result.media_type = 'image/png';
    } else if (plan.kind === 'cursor_position') {
      result.cursor = await this.screen.cursor();
    } else if (plan.kind === 'wait') {
      await new Promise((resolve) => setTimeout(resolve, plan.ms));
    } else {
      const typed = plan.args[0] === 'type' ? (plan.args.at(-1)?.length ?? 0) : 0;
      await this.input(() => this.screen.xdotool(plan.args, 30_000 + typed * 100));
    }
    result.elapsed_ms = Math.round(performance.now() - started);
    return result;
  }

  private async resize(body: unknown): Promise<ScreenSize> {
    const { width, height } = (body ?? {}) as { width?: unknown; height?: unknown };
    const check = (value: unknown, name: string, max: number): number => {
      if (!Number.isInteger(value) || (value as number) < MIN_SCREEN || (value as number) > max) {
        throw new InvalidAction(['body', name], `${name} must be an integer from ${MIN_SCREEN} to ${max}`);
      }
      return value as number;
    };
    const size = { width: check(width, 'width', MAX_SCREEN_WIDTH), height: check(height, 'height', MAX_SCREEN_HEIGHT) };
    if (this.recorder.current()) throw new RecordingConflict('a recording is running: stop it before resizing the screen');
    this.screenSize = await this.input(() => this.screen.resize(size));
    return this.screenSize;
  }
}
