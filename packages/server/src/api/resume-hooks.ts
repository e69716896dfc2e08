/**
 * Says so when a request resumed a paused VM (auto-resume, issue 37): every HTTP answer to such a request carries
 * `Sandboxd-Resumed: <ms>` (how long the resume took). The core notes the resume in the request's asynchronous
 * context (core/vms/resume-note.ts); this enters that context when the request arrives and again before its handler
 * (the body is read in the socket's context, not the request's: trace-hooks.ts does the same), and reads the note
 * when the answer is sent.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { newResumeNote, withResumeNote, type ResumeNote } from '../core/vms/index.ts';

/** The header of an answer whose request resumed a paused VM: milliseconds the resume took. */
export const RESUMED_HEADER = 'Sandboxd-Resumed';

export function registerResumeHeader(app: FastifyInstance): void {
  const notes = new WeakMap<FastifyRequest, ResumeNote>();
  app.addHook('onRequest', (request, _reply, done) => {
    const note = newResumeNote();
    notes.set(request, note);
    withResumeNote(note, done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const note = notes.get(request);
    if (note) withResumeNote(note, done);
    else done();
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const ms = notes.get(request)?.ms;
    if (ms !== null && ms !== undefined) reply.header(RESUMED_HEADER, String(ms));
    return payload;
  });
}
