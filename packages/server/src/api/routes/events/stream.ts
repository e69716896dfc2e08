/**
 * GET /v1/events/stream: the caller's events as Server-Sent Events, live. Each message has `id:` (the
 * outbox position), `event:` (the type) and `data:` (the same JSON envelope a webhook receives, plus
 * user_id). A reconnecting client sends `Last-Event-ID` and gets everything after it from the store
 * first; without it the stream starts with the next event. A comment line every 15 s keeps proxies from
 * closing an idle stream; streams end cleanly when the server shuts down.
 */
import { once } from 'node:events';
import { Type } from 'typebox';
import { badRequest, forbidden } from '../../../core/errors.ts';
import { toWireEvent } from '../../../core/webhooks/wire.ts';
import { principalOf } from '../../authentication.ts';
import { authedResponses, BEARER_OR_API_KEY, byMediaType, MAX_RECORD_ID } from '../../schemas/common.ts';
import type { App, RouteContext } from '../../types.ts';

const KEEP_ALIVE_MS = 15_000;
/** An event id as the stream writes it: decimal digits, no sign, no leading zero. */
const CANONICAL_ID = /^(0|[1-9][0-9]{0,9})$/;
const RECONNECT_DELAY_MS = 2_000;

export function registerEventStream(app: App, { services, requireAuth }: RouteContext): void {
  const streams = new Set<AbortController>();
  // Before the server waits for open connections to finish: an open stream never would.
  app.addHook('preClose', async () => {
    for (const stream of streams) stream.abort();
  });

  app.get(
    '/v1/events/stream',
    {
      schema: {
        tags: ['events'],
        summary: 'Follow your events live (Server-Sent Events)',
        description:
          "text/event-stream. Send Last-Event-ID (or ?last_event_id=) to resume after an event id; without it the stream starts with the next event. Administrators may pass all=true for every user's events.",
        security: BEARER_OR_API_KEY,
        querystring: Type.Object({
          all: Type.Optional(Type.Boolean({ default: false, description: "Every user's events (administrators only)" })),
          last_event_id: Type.Optional(
            Type.Integer({ minimum: 0, maximum: MAX_RECORD_ID, description: 'Same as the Last-Event-ID header, for clients that cannot set it' }),
          ),
        }),
        response: authedResponses(
          { 200: byMediaType('A stream of `id:`, `event:`, `data:` messages', { 'text/event-stream': Type.String({ description: 'Server-Sent Events' }) }) },
          { 400: 'Last-Event-ID is not an event id', 403: 'all=true without being an administrator' },
        ),
      },
      onRequest: requireAuth,
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const all = request.query.all === true;
      if (all && !principal.isAdmin) throw forbidden("all=true follows every user's events: only administrators may use it");
      const header = request.headers['last-event-id'];
      if (typeof header === 'string' && !(CANONICAL_ID.test(header.trim()) && Number(header.trim()) <= MAX_RECORD_ID))
        throw badRequest('Last-Event-ID must be the id of an event from this stream');
      const resumeAfter = typeof header === 'string' ? Number(header.trim()) : request.query.last_event_id;
      const afterSeq = resumeAfter ?? (await services.eventFeed.latestSeq());

      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': request.id,
      });
      res.write(`retry: ${RECONNECT_DELAY_MS}\n: following events after ${afterSeq}\n\n`);

      const controller = new AbortController();
      streams.add(controller);
      res.on('close', () => controller.abort());
      const keepAlive = setInterval(() => res.write(': keep-alive\n\n'), KEEP_ALIVE_MS);
      try {
        for await (const event of services.eventFeed.follow({ userId: all ? null : principal.userId, afterSeq, signal: controller.signal })) {
          const data = JSON.stringify({ ...toWireEvent(event), user_id: event.userId });
          if (!res.write(`id: ${event.seq}\nevent: ${event.type}\ndata: ${data}\n\n`)) await once(res, 'drain', { signal: controller.signal });
        }
      } catch (error) {
        if (!controller.signal.aborted) request.log.error({ err: error }, 'event stream failed');
      } finally {
        clearInterval(keepAlive);
        streams.delete(controller);
        res.end();
      }
    },
  );
}
