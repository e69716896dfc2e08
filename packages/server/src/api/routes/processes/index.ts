/**
 * Background processes of a session (core/processes.ts): start (answered as JSON, or streamed with its output when
 * the request accepts an event stream or NDJSON), list, read one, its output (streamed or a page), stdin, signals
 * and kill. Every route checks that the session is the caller's (404 otherwise) before anything else.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { badRequest } from '../../../core/errors.ts';
import type { ProcessOutput } from '../../../core/process-output.ts';
import type { ProcessView } from '../../../core/processes.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, byMediaType } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';
import { EventEncoder, EventWriter, exitEvent, streamFormatOf, type StreamFormat } from './output-stream.ts';
import { OneProcessParams, ProcessOutputQuery, ProcessParams, ProcessSignalRequest, ProcessStdinRequest, type ProcessStartRequest } from './schemas.ts';

const TAGS = ['processes'];
const STREAMED = {
  'text/event-stream': Type.String({ description: 'Server-Sent Events: `id:` (output events), `event:` (the type), `data:` (a ProcessEvent)' }),
  'application/x-ndjson': Type.String({ description: 'One ProcessEvent per line (empty lines are keep-alives)' }),
};
/** An event id as a stream writes it (Last-Event-ID). */
const EVENT_ID = /^(0|[1-9][0-9]{0,15})$/;

export function registerProcessRoutes(app: App, { services, requireAuth }: RouteContext): void {
  const processes = services.sandbox.processes;
  const streams = new Set<AbortController>();
  // Before the server waits for open connections to finish: a followed stream would not end by itself.
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.abort();
  });

  /** Streams `output` after `after` to the hijacked answer, then the exit event when the process ended. */
  async function stream(
    request: FastifyRequest,
    reply: FastifyReply,
    format: StreamFormat,
    read: { output: ProcessOutput; after: number; follow: boolean; encoding: 'utf8' | 'base64'; first?: ProcessView; final: () => Promise<ProcessView> },
  ): Promise<void> {
    reply.hijack();
    const controller = new AbortController();
    streams.add(controller);
    reply.raw.on('close', () => controller.abort());
    const writer = new EventWriter(reply.raw, format, request.id, controller.signal);
    const encoder = new EventEncoder(read.encoding);
    try {
      if (read.first) await writer.write({ type: 'start', process: read.first });
      for await (const item of read.output.read(read.after, { follow: read.follow, signal: controller.signal })) {
        const event = encoder.encode(item);
        if (event) await writer.write(event);
        else await writer.write(exitEvent(await read.final()));
      }
    } catch (error) {
      if (!controller.signal.aborted) request.log.error({ err: error }, 'process output stream failed');
    } finally {
      streams.delete(controller);
      writer.end();
    }
  }

  app.post(
    '/v1/sessions/:session_id/processes',
    {
      schema: {
        tags: TAGS,
        summary: 'Start a background process',
        description:
          "Starts a program in the session's VM (starting the VM when the session has none) beside whatever else runs there, and answers once it runs (201 with the process). With `Accept: text/event-stream` or `application/x-ndjson` the answer is instead the process's output as it happens: a `start` event, `stdout`/`stderr` events, and `exit` last. Closing that stream leaves the process running (read it again with GET …/output; stop it with DELETE). A program that cannot start (its working directory or program missing) is 400. The process is held by the node that started it, in memory: a restart of the server ends it.",
        security: BEARER_OR_API_KEY,
        params: ProcessParams,
        body: Type.Ref('ProcessStartRequest') as unknown as typeof ProcessStartRequest,
        response: authedResponses(
          { 201: Type.Ref('ProcessInfo'), 200: byMediaType('The output as it happens (when asked for by Accept)', STREAMED) },
          {
            400: 'Neither or both of command and argv, or the program could not start',
            404: 'No such session among yours',
            429: 'The session runs the most processes it may at once',
          },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const body = request.body as ProcessStartRequest;
      const sessionId = request.params.session_id;
      const format = streamFormatOf(request.headers.accept);
      const principal = principalOf(request);
      const view = await processes.start(principal, sessionId, {
        command: body.command,
        argv: body.argv,
        cwd: body.cwd,
        env: body.env,
        timeoutSeconds: body.timeout_seconds,
        stdin: body.stdin,
        tag: body.tag,
        user: body.user,
      });
      if (!format) return reply.code(201).send(view);
      const { output } = await processes.attach(principal, sessionId, view.process_id);
      await stream(request, reply, format, {
        output,
        after: 0,
        follow: true,
        encoding: 'utf8',
        first: view,
        final: () => processes.get(principal, sessionId, view.process_id),
      });
    },
  );

  app.get(
    '/v1/sessions/:session_id/processes',
    {
      schema: {
        tags: TAGS,
        summary: 'List background processes',
        description: 'The running processes of the session, and those that ended in the last 10 minutes, oldest first.',
        security: BEARER_OR_API_KEY,
        params: ProcessParams,
        response: authedResponses({ 200: Type.Ref('ProcessList') }, { 404: 'No such session among yours' }),
      },
      onRequest: requireAuth,
    },
    async (request) => ({ processes: await processes.list(principalOf(request), request.params.session_id) }),
  );

  app.get(
    '/v1/sessions/:session_id/processes/:process_id',
    {
      schema: {
        tags: TAGS,
        summary: 'Read a background process',
        security: BEARER_OR_API_KEY,
        params: OneProcessParams,
        response: authedResponses({ 200: Type.Ref('ProcessInfo') }, { 404: 'No such session among yours, or no such process in it' }),
      },
      onRequest: requireAuth,
    },
    async (request) => processes.get(principalOf(request), request.params.session_id, request.params.process_id),
  );

  app.get(
    '/v1/sessions/:session_id/processes/:process_id/output',
    {
      schema: {
        tags: TAGS,
        summary: "Read or follow a process's output",
        description:
          'The output events after `after` (the newest 4 MiB of output are kept; a `dropped` event says how many were skipped), then, when it ended, its `exit` event. With `Accept: text/event-stream` (Last-Event-ID resumes) or `application/x-ndjson` the events are streamed and, with `follow` (the default), live output follows until the process ends. Otherwise the answer is one JSON page of what is there now.',
        security: BEARER_OR_API_KEY,
        params: OneProcessParams,
        querystring: ProcessOutputQuery,
        response: authedResponses(
          { 200: byMediaType('The output', { 'application/json': Type.Ref('ProcessOutputPage'), ...STREAMED }) },
          { 400: 'Last-Event-ID is not an event id', 404: 'No such session among yours, or no such process in it' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const { session_id: sessionId, process_id: processId } = request.params;
      const { output } = await processes.attach(principal, sessionId, processId);
      const format = streamFormatOf(request.headers.accept);
      const header = request.headers['last-event-id'];
      if (format === 'sse' && typeof header === 'string' && !EVENT_ID.test(header.trim()))
        throw badRequest('Last-Event-ID must be the id of an event of this stream');
      const after = format === 'sse' && typeof header === 'string' ? Number(header.trim()) : (request.query.after ?? 0);
      const encoding = request.query.encoding ?? 'utf8';
      const final = () => processes.get(principal, sessionId, processId);
      if (format) return stream(request, reply, format, { output, after, follow: request.query.follow ?? true, encoding, final });
      const encoder = new EventEncoder(encoding);
      const events: Record<string, unknown>[] = [];
      let nextAfter = after;
      for await (const item of output.read(after, { follow: false, signal: new AbortController().signal })) {
        if (item.kind === 'output') nextAfter = item.event.seq;
        const event = encoder.encode(item);
        events.push(event ?? exitEvent(await final()));
      }
      return { events, process: await final(), next_after: nextAfter };
    },
  );

  app.post(
    '/v1/sessions/:session_id/processes/:process_id/stdin',
    {
      schema: {
        tags: TAGS,
        summary: "Write to a process's stdin",
        description:
          'Writes `data` (or `data_base64`) to the stdin of a process started with `stdin: true`; `eof` closes it after. 409 when it has no open stdin or has ended.',
        security: BEARER_OR_API_KEY,
        params: OneProcessParams,
        body: ProcessStdinRequest,
        response: authedResponses(
          { 200: Type.Ref('ProcessInfo') },
          { 400: 'Both data and data_base64', 404: 'No such session among yours, or no such process in it', 409: 'No open stdin, or the process ended' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request) => {
      const { data, data_base64: base64, eof } = request.body;
      if (data !== undefined && base64 !== undefined) throw badRequest('give data or data_base64, not both');
      const bytes = base64 !== undefined ? Buffer.from(base64, 'base64') : Buffer.from(data ?? '', 'utf8');
      return processes.writeStdin(principalOf(request), request.params.session_id, request.params.process_id, bytes, eof ?? false);
    },
  );

  app.post(
    '/v1/sessions/:session_id/processes/:process_id/signal',
    {
      schema: {
        tags: TAGS,
        summary: 'Send a signal to a process',
        description: "Sends the signal to the program's process group (what it started too). 409 when it has ended.",
        security: BEARER_OR_API_KEY,
        params: OneProcessParams,
        body: ProcessSignalRequest,
        response: authedResponses({ 200: Type.Ref('ProcessInfo') }, { 404: 'No such session among yours, or no such process in it', 409: 'The process ended' }),
      },
      onRequest: requireAuth,
    },
    async (request) => processes.signal(principalOf(request), request.params.session_id, request.params.process_id, request.body.signal),
  );

  app.delete(
    '/v1/sessions/:session_id/processes/:process_id',
    {
      schema: {
        tags: TAGS,
        summary: 'Kill a process',
        description:
          "Kills the program's process group (SIGKILL) and answers the process once it ended; the VM and its other runs go on. An ended process answers as it is.",
        security: BEARER_OR_API_KEY,
        params: OneProcessParams,
        response: authedResponses({ 200: Type.Ref('ProcessInfo') }, { 404: 'No such session among yours, or no such process in it' }),
      },
      onRequest: requireAuth,
    },
    async (request) => processes.kill(principalOf(request), request.params.session_id, request.params.process_id),
  );
}
