/**
 * JavaScript contexts of the code interpreter: each a kernel process (js-kernel.ts) of the sandbox's session, started
 * through sandboxd's processes (core/processes.ts: the one way into the guest) as `user`, fed its runs on stdin, its
 * output read from the process's kept output. The session's default JavaScript context (`js-default`) starts with
 * the first run that names no context; others are made by `createCodeContext({ language: 'js' })`. Which kernel
 * process serves which context is kept in this server's memory (as the processes themselves are); a kernel that
 * ended (its VM paused or restarted without it) is started afresh at the next run, without the old state.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { AppError } from '../../../core/errors.ts';
import type { Services } from '../../../services.ts';
import type { SandboxCaller } from '../sandbox-traffic/access.ts';
import { KERNEL_PATH, KERNEL_SOURCE, MARKER_START } from './js-kernel.ts';

/** The default JavaScript context of a session (what a JavaScript run without a context uses). */
export const DEFAULT_JS_CONTEXT = 'js-default';
/** Ids of the JavaScript contexts made by `createCodeContext`. */
const JS_CONTEXT_ID = /^js-[0-9a-f]{16}$/;
/** JavaScript contexts per session at most (the default one included). */
const MAX_JS_CONTEXTS = 8;
/** The tag of kernel processes: the facade's own, hidden from `commands.list()`. */
export const KERNEL_TAG = 'sandboxd:js-kernel';

export interface JsContext {
  id: string;
  sessionId: string;
  cwd: string;
  nonce: string;
  processId: string | null;
  /** Runs of one context one after another (a kernel runs one cell at a time). */
  queue: Promise<unknown>;
}

/** The outcome of one run: the last expression's value as text, or the error it threw. */
export interface JsRunOutcome {
  text?: string;
  error?: { name: string; value: string; traceback: string };
}

/** One run: its code and per-run env, where its output goes as it is printed, and the reader going away. */
export interface JsRun {
  request: { code: string; env: Record<string, string> };
  onOutput: (stream: 'stdout' | 'stderr', text: string) => void;
  signal: AbortSignal;
}

export function isJsContextId(id: string): boolean {
  return id === DEFAULT_JS_CONTEXT || JS_CONTEXT_ID.test(id);
}

/** The longest end of `text` that could begin `marker` (held back until the next chunk decides). */
function markerPrefixAtEnd(text: string, marker: string): number {
  for (let length = Math.min(marker.length - 1, text.length); length > 0; length--) if (marker.startsWith(text.slice(-length))) return length;
  return 0;
}

export class JsContexts {
  private readonly contexts = new Map<string, JsContext>();

  constructor(private readonly services: Services) {}

  private key(sessionId: string, id: string): string {
    return `${sessionId}/${id}`;
  }

  /** The session's JavaScript contexts, the default one once it started. */
  list(sessionId: string): JsContext[] {
    return [...this.contexts.values()].filter((context) => context.sessionId === sessionId);
  }

  create(caller: SandboxCaller, cwd: string, id = `js-${randomBytes(8).toString('hex')}`): JsContext {
    if (!cwd.startsWith('/')) throw new AppError('BAD_REQUEST', 'cwd must be an absolute path');
    if (this.list(caller.session.id).length >= MAX_JS_CONTEXTS)
      throw new AppError('QUOTA_EXCEEDED', `sandbox ${caller.session.id} has ${MAX_JS_CONTEXTS} JavaScript contexts already: remove one first`);
    const context: JsContext = { id, sessionId: caller.session.id, cwd, nonce: randomBytes(12).toString('hex'), processId: null, queue: Promise.resolve() };
    this.contexts.set(this.key(caller.session.id, id), context);
    return context;
  }

  /** A context of the caller's sandbox; the default one is made on first use. 404 for any other unknown id. */
  find(caller: SandboxCaller, id: string, defaultCwd: string): JsContext {
    const found = this.contexts.get(this.key(caller.session.id, id));
    if (found) return found;
    if (id === DEFAULT_JS_CONTEXT) return this.create(caller, defaultCwd, DEFAULT_JS_CONTEXT);
    throw new AppError('NOT_FOUND', `context ${id} not found`);
  }

  /** Ends the context's kernel: its state is gone, the next run starts a new one. */
  async restart(caller: SandboxCaller, context: JsContext): Promise<void> {
    const processId = context.processId;
    context.processId = null;
    if (processId) await this.services.sandbox.processes.kill(caller.principal, caller.session.id, processId).catch(() => undefined);
  }

  async remove(caller: SandboxCaller, context: JsContext): Promise<void> {
    this.contexts.delete(this.key(caller.session.id, context.id));
    await this.restart(caller, context);
  }

  /**
   * Runs `code` in the context (after the runs before it), its output to `onOutput` as it is printed; resolves with
   * the outcome. `signal` (the reader went away) ends the kernel, as a run cannot be interrupted inside it.
   */
  run(caller: SandboxCaller, context: JsContext, { request, onOutput, signal }: JsRun): Promise<JsRunOutcome> {
    const run = context.queue.then(() => this.runNow(caller, context, { request, onOutput, signal }));
    context.queue = run.catch(() => undefined);
    return run;
  }

  private async runNow(caller: SandboxCaller, context: JsContext, { request, onOutput, signal }: JsRun): Promise<JsRunOutcome> {
    const { processes } = this.services.sandbox;
    const { principal, session } = caller;
    const processId = await this.kernelOf(caller, context);
    const { view, output } = await processes.attach(principal, session.id, processId);
    const line = Buffer.from(`${JSON.stringify(request)}\n`);
    await processes.writeStdin(principal, session.id, processId, line, false);
    const marker = `${MARKER_START}${context.nonce}`;
    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    let pending = '';
    const stop = new AbortController();
    const onAbort = () => {
      stop.abort();
      void this.restart(caller, context);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for await (const item of output.read(view.output_seq, { follow: true, signal: stop.signal })) {
        if (item.kind === 'end') {
          context.processId = null;
          throw new AppError('INTERNAL_ERROR', 'the JavaScript kernel ended during the run (its state is gone; the next run starts a new one)');
        }
        if (item.kind !== 'output') continue;
        const text = decoders[item.event.stream].write(item.event.data);
        if (item.event.stream === 'stderr') {
          if (text) onOutput('stderr', text);
          continue;
        }
        pending += text;
        const at = pending.indexOf(marker);
        if (at >= 0) {
          const end = pending.indexOf('\n', at);
          if (at > 0) onOutput('stdout', pending.slice(0, at));
          pending = pending.slice(at);
          if (end < 0) continue;
          return JSON.parse(pending.slice(marker.length, end - at)) as JsRunOutcome;
        }
        const held = markerPrefixAtEnd(pending, marker);
        if (pending.length > held) onOutput('stdout', pending.slice(0, pending.length - held));
        pending = pending.slice(pending.length - held);
      }
      throw new AppError('INTERNAL_ERROR', 'the run was given up');
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** The context's running kernel process, started (with its program written to the guest) when it has none. */
  private async kernelOf(caller: SandboxCaller, context: JsContext): Promise<string> {
    const { processes, files } = this.services.sandbox;
    const { principal, session } = caller;
    if (context.processId) {
      const view = await processes.get(principal, session.id, context.processId).catch(() => null);
      if (view?.status === 'running') return context.processId;
    }
    await files.upload(principal, session.id, { remotePath: KERNEL_PATH, filename: null, recursive: false, body: Readable.from([Buffer.from(KERNEL_SOURCE)]) });
    const view = await processes.start(principal, session.id, {
      argv: ['node', KERNEL_PATH, context.nonce],
      cwd: context.cwd,
      user: 'user',
      stdin: true,
      tag: KERNEL_TAG,
    });
    context.processId = view.process_id;
    return view.process_id;
  }
}
