/**
 * Event patterns of a webhook endpoint. A pattern is an event type in which `*` stands for any
 * non-empty run of characters: `vm.*` matches `vm.started`, `*.failed` matches `execution.failed`, and
 * `*` alone matches every event.
 */
import { badRequest } from '../errors.ts';

const PATTERN = /^(\*|[a-z0-9_]+)(\.(\*|[a-z0-9_]+))*$/;
export const MAX_PATTERNS = 50;
const MAX_PATTERN_LENGTH = 100;

/** Checks and de-duplicates patterns (order kept); 400 naming the first bad one. */
export function normalizePatterns(patterns: string[]): string[] {
  if (patterns.length === 0) throw badRequest('event_patterns must name at least one pattern (use ["*"] for every event)');
  if (patterns.length > MAX_PATTERNS) throw badRequest(`event_patterns may have at most ${MAX_PATTERNS} patterns`);
  for (const pattern of patterns) {
    if (pattern.length > MAX_PATTERN_LENGTH || !PATTERN.test(pattern)) {
      throw badRequest(
        `event pattern "${pattern}" is not valid: use dot-separated lower-case names where * stands for any part, e.g. "vm.*", "*.failed" or "*"`,
      );
    }
  }
  return [...new Set(patterns)];
}

function toRegExp(pattern: string): RegExp {
  return new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/\./g, '\\.'))
      .join('.+')}$`,
  );
}

/** True when any of the patterns matches the event type. */
export function matchesAny(patterns: string[], eventType: string): boolean {
  return patterns.some((pattern) => pattern === '*' || pattern === eventType || toRegExp(pattern).test(eventType));
}
