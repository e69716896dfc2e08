/**
 * Whether the request being served resumed a paused VM, and how long that took: the VM service notes it where it
 * resumes one for a request (`ensureVm`), and the API answers it (the `Sandboxd-Resumed` header on every HTTP
 * answer, `resumed` in an execute's body) without each route passing it along. The note travels with the request's
 * asynchronous context (AsyncLocalStorage), which the API enters for each request (`withResumeNote`).
 */
import { AsyncLocalStorage } from 'node:async_hooks';

/** What a request resumed. */
export interface ResumeNote {
  /** How long the resume took, ms (the longest, should one request resume twice); null: nothing was resumed. */
  ms: number | null;
}

const notes = new AsyncLocalStorage<ResumeNote>();

/** A note for a new request. */
export function newResumeNote(): ResumeNote {
  return { ms: null };
}

/** Runs `work` (the rest of a request) with `note` as its note. */
export function withResumeNote<T>(note: ResumeNote, work: () => T): T {
  return notes.run(note, work);
}

/** Notes that the current request resumed a VM in `ms`; outside a request (background work), nothing. */
export function noteResumed(ms: number): void {
  const note = notes.getStore();
  if (note) note.ms = Math.max(note.ms ?? 0, Math.round(ms));
}

/** How long the current request's resume took, ms, or null when it resumed nothing. */
export function resumedMs(): number | null {
  return notes.getStore()?.ms ?? null;
}
