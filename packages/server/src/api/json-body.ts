/**
 * JSON bodies with a bounded shape. `JSON.parse` (and secure-json-parse on top of it) builds whatever the
 * text describes: a 10 MB document nested five million levels deep becomes five million arrays and
 * gigabytes of heap, and holds the event loop for seconds, before any schema can refuse it. So the text
 * is scanned first, in one linear pass that allocates nothing, and refused past
 * {@link JSON_MAX_DEPTH} levels of nesting or {@link JSON_MAX_VALUES} values. No body this API takes
 * comes near either (the deepest is three levels; the largest has a few hundred values).
 * Written here rather than taken from a library: the streaming parsers with a depth option still build
 * the values they parse, which is the cost to avoid; a scan of brackets, commas and strings is a few lines.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { InputError, type InputProblem } from '../core/errors.ts';

export const JSON_MAX_DEPTH = 64;
export const JSON_MAX_VALUES = 10_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * The first problem with the shape of a JSON text, or null. Counts containers and the commas between
 * values outside strings; the text need not be valid JSON (the parser reports that afterwards).
 */
export function jsonShapeProblem(text: string, where: (string | number)[] = ['body']): InputProblem | null {
  let depth = 0;
  let values = 1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > JSON_MAX_DEPTH) {
        return { loc: [...where, i], msg: `Invalid JSON: nested more than ${JSON_MAX_DEPTH} levels deep at position ${i}`, type: 'json_invalid' };
      }
      values++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
    else if (c === COMMA && ++values > JSON_MAX_VALUES) {
      return {
        loc: [...where, i],
        msg: `Invalid JSON: more than ${JSON_MAX_VALUES} values (at position ${i}); no request needs that many`,
        type: 'json_invalid',
      };
    }
  }
  return null;
}

/** Parses a JSON text that passed {@link jsonShapeProblem}; throws a 422 otherwise. */
export function parseBoundedJson(text: string, where: (string | number)[]): unknown {
  const problem = jsonShapeProblem(text, where);
  if (problem) throw new InputError([problem]);
  return JSON.parse(text);
}

/** Replaces Fastify's JSON body parser with one that checks the shape first, then parses as before. */
export function registerBoundedJsonParser(app: FastifyInstance): void {
  // secure-json-parse underneath: `__proto__` and `constructor.prototype` keys are refused.
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request: FastifyRequest, body: string | Buffer, done) => {
    const problem = jsonShapeProblem(body as string);
    if (problem) {
      done(new InputError([problem]), undefined);
      return;
    }
    parse(request, body as string, done);
  });
}
