/**
 * The languages `@e2b/code-interpreter` names, and what sandboxd runs each with. Python is the session's stateful
 * interpreter (or a context of it); JavaScript is a kernel per context (js-contexts.ts, /execute sends it there);
 * bash runs as a fresh shell per run, keeping no state between runs (docs/e2b.md lists this as a difference).
 */
import { AppError } from '../../../core/errors.ts';
import type { Language } from '../../../model.ts';

/** A language as E2B names it in contexts and answers. */
export type E2bLanguage = 'python' | 'javascript' | 'bash';

/** E2B's names for a language (its server lower-cases and maps `js` and `ts` the same way). */
const ALIASES: Record<string, E2bLanguage> = {
  python: 'python',
  python3: 'python',
  js: 'javascript',
  javascript: 'javascript',
  bash: 'bash',
};

const RUNS_AS: Record<E2bLanguage, Language> = { python: 'python', javascript: 'node', bash: 'bash' };

/** The language a request names (absent: Python, as E2B's default), or a 400 naming what is offered. */
export function e2bLanguageOf(name: string | undefined | null): E2bLanguage {
  if (name === undefined || name === null || name.trim() === '') return 'python';
  const known = ALIASES[name.trim().toLowerCase()];
  if (!known) {
    throw new AppError(
      'BAD_REQUEST',
      `language ${JSON.stringify(name)} is not offered: sandboxd runs python, javascript (js) and bash (TypeScript, R and Java are not; see docs/e2b.md)`,
    );
  }
  return known;
}

/** What sandboxd's executions run an E2B language as. */
export function executionLanguageOf(language: E2bLanguage): Language {
  return RUNS_AS[language];
}
