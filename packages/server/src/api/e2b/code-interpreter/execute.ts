/**
 * `POST /execute`: runs code in the sandbox and answers the run as it happens (NDJSON): `stdout`/`stderr` lines as
 * the code writes, then its `result` lines (display data, figures as base64 PNG, the last value as the main
 * result), an `error` line if it failed, and `end_of_execution`. A facade over sandboxd's streamed executions:
 * Python runs in the session's interpreter or one of its contexts (state kept); JavaScript and bash run as a
 * fresh process each (languages.ts). The SDK closes the stream when its `timeoutMs` ends: the run is then
 * cancelled (Python is interrupted and keeps its state, a command is killed).
 */
import { StringDecoder } from 'node:string_decoder';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import { AppError } from '../../../core/errors.ts';
import type { ExecuteRequest } from '../../../core/executions.ts';
import type { Services } from '../../../services.ts';
import type { App } from '../../types.ts';
import { hasAccessToken, type SandboxCaller } from '../sandbox-traffic/access.ts';
import { setEnvCode, resetEnvCode } from './env-vars.ts';
import { DEFAULT_JS_CONTEXT, isJsContextId, type JsContext } from './js-contexts.ts';
import { DEFAULT_JS_CWD, jsContexts } from './js-registry.ts';
import { e2bLanguageOf, executionLanguageOf } from './languages.ts';
import { LineStream } from './line-stream.ts';
import { closingLines } from './result-lines.ts';
import { ExecuteBody } from './schemas.ts';

/**
 * How long the run may wait for its VM before it is refused (the sandbox's VM is normally running already). The
 * run itself is bounded by sandboxd's longest run and the SDK's `timeoutMs`, not by this.
 */
const VM_WAIT_SECONDS = 60;

type Body = Static<typeof ExecuteBody>;

/**
 * Runs with env_vars still going, by context (`<session>/<context>`), until their variables are put back: the next
 * run of that context waits for it, so it never sees them (E2B's server holds a lock per context for the same
 * reason). A run whose reader left early (its timeoutMs) puts them back only once it has stopped. Kept per process:
 * the server that runs a sandbox's code is the one that answers for it.
 */
const envRuns = new Map<string, Promise<void>>();

/** The execution a request asks for, without its output callback. */
function executeRequestOf(caller: SandboxCaller, body: Body): ExecuteRequest {
  // A context is a Python interpreter (contexts.ts makes no other kind).
  const language = body.context_id ? 'python' : e2bLanguageOf(body.language);
  const env = body.env_vars ?? {};
  return {
    sessionId: caller.session.id,
    language: executionLanguageOf(language),
    source: body.code,
    timeoutSeconds: VM_WAIT_SECONDS,
    contextId: body.context_id ?? null,
    streamTails: false,
    ...(language !== 'python' && Object.keys(env).length > 0 ? { env } : {}),
  };
}

/** Runs a step of a Python run's own (setting or putting back its env_vars); throws when the step failed. */
async function runStep(services: Services, caller: SandboxCaller, run: ExecuteRequest, source: string): Promise<void> {
  const step = await services.sandbox.executions.execute(caller.principal, { ...run, source, streamTails: true });
  if (step.status !== 'completed') throw new AppError('INTERNAL_ERROR', `the run's env_vars could not be applied: ${step.error ?? step.status}`);
}

async function execute(services: Services, request: FastifyRequest, body: Body, reply: FastifyReply): Promise<void> {
  const caller = request.e2bCaller!;
  // Running code takes the sandbox's access token even when its ports are public (E2B's server checks it too).
  if (!hasAccessToken(services, caller, request.headers))
    throw new AppError('NOT_AUTHENTICATED', `send sandbox ${caller.session.id}'s access token (envdAccessToken) as X-Access-Token`);
  if (body.context_id && body.language) throw new AppError('BAD_REQUEST', 'Only one of context_id or language can be provided');
  const javascript = body.context_id ? isJsContextId(body.context_id) : e2bLanguageOf(body.language) === 'javascript';
  if (javascript) {
    const context = jsContexts(services).find(caller, body.context_id ?? DEFAULT_JS_CONTEXT, DEFAULT_JS_CWD);
    return streamJsRun(services, request, reply, context, body);
  }
  const run = executeRequestOf(caller, body);
  const contextKey = `${caller.session.id}/${run.contextId ?? 'default'}`;
  await envRuns.get(contextKey);
  const pythonEnv = run.language === 'python' ? (body.env_vars ?? {}) : {};
  if (Object.keys(pythonEnv).length === 0) return streamRun(services, request, reply, run);
  let done = (): void => {};
  const guard = new Promise<void>((resolve) => (done = resolve));
  envRuns.set(contextKey, guard);
  try {
    await runStep(services, caller, run, setEnvCode(pythonEnv));
    await streamRun(services, request, reply, run, async () => {
      // Before the stream ends, so the next run (which the SDK starts after it) cannot see them.
      await runStep(services, caller, run, resetEnvCode(pythonEnv, caller.session.env)).catch((error: unknown) => {
        request.log.warn({ err: error }, "the code interpreter could not put a run's env_vars back");
      });
    });
  } finally {
    done();
    if (envRuns.get(contextKey) === guard) envRuns.delete(contextKey);
  }
}

/** Streams one run to the hijacked answer; `afterRun` goes once the run has ended (or was refused), before the stream's end. */
async function streamRun(services: Services, request: FastifyRequest, reply: FastifyReply, run: ExecuteRequest, afterRun?: () => Promise<void>): Promise<void> {
  const { principal } = request.e2bCaller!;
  const lines = new LineStream();
  const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
  const onOutput = (stream: 'stdout' | 'stderr', chunk: Buffer): void => {
    const text = decoders[stream].write(chunk);
    if (text) lines.send({ type: stream, text, timestamp: new Date().toISOString() }, true);
  };
  const executions = services.sandbox.executions;
  // Refusals (rate limit, quota, no VM, an unknown context) are thrown here: ordinary answers, before the stream.
  const { record, finished } = await executions.executeStreamed(principal, { ...run, onOutput }).catch(async (error: unknown) => {
    await afterRun?.();
    throw error;
  });
  reply.hijack();
  let ended = false;
  // The SDK closes the stream at its timeoutMs (or its caller went away): the run stops too.
  reply.raw.on('close', () => {
    if (!ended) void executions.cancel(principal, record.id).catch(() => {});
  });
  lines.open(reply.raw, request.id);
  try {
    const execution = await finished;
    for (const stream of ['stdout', 'stderr'] as const) {
      const rest = decoders[stream].end();
      if (rest) lines.send({ type: stream, text: rest, timestamp: new Date().toISOString() });
    }
    for (const line of closingLines(execution)) lines.send(line);
  } catch (error) {
    request.log.warn({ err: error, executionId: record.id }, 'code interpreter run failed');
    const message = error instanceof AppError ? error.message : 'the run failed on the server';
    lines.send({ type: 'error', name: 'UnexpectedEndOfExecution', value: message, traceback: '' });
  } finally {
    ended = true;
  }
  await afterRun?.();
  lines.send({ type: 'end_of_execution' });
  lines.end();
}

/** Runs JavaScript in a kernel of its context (js-contexts.ts) and streams it like any run. */
async function streamJsRun(services: Services, request: FastifyRequest, reply: FastifyReply, context: JsContext, body: Body): Promise<void> {
  const caller = request.e2bCaller!;
  reply.hijack();
  const lines = new LineStream();
  const gone = new AbortController();
  let ended = false;
  // The SDK closes the stream at its timeoutMs: a JavaScript run cannot be interrupted, so its kernel is ended.
  reply.raw.on('close', () => {
    if (!ended) gone.abort();
  });
  lines.open(reply.raw, request.id);
  try {
    const outcome = await jsContexts(services).run(caller, context, {
      request: { code: body.code, env: body.env_vars ?? {} },
      onOutput: (stream, text) => lines.send({ type: stream, text, timestamp: new Date().toISOString() }, true),
      signal: gone.signal,
    });
    if (outcome.text !== undefined) lines.send({ type: 'result', text: outcome.text, is_main_result: true });
    if (outcome.error) lines.send({ type: 'error', ...outcome.error });
  } catch (error) {
    if (!gone.signal.aborted) request.log.warn({ err: error }, 'JavaScript run failed');
    const message = error instanceof AppError ? error.message : 'the run failed on the server';
    lines.send({ type: 'error', name: 'UnexpectedEndOfExecution', value: message, traceback: '' });
  } finally {
    ended = true;
  }
  lines.send({ type: 'end_of_execution' });
  lines.end();
}

export function registerExecute(scope: App, services: Services): void {
  scope.post('/execute', { schema: { hide: true, body: ExecuteBody } }, (request, reply) => execute(services, request, request.body, reply));
}
