/**
 * Answers read in camelCase with durations in milliseconds, as the rest of this client is written: `result.exitCode`
 * beside `result.exit_code`, `status.expiresInMs` beside `status.expires_in_seconds` (× 1000).
 *
 * The camelCase names are getters that are not enumerable, over the snake_case fields the API sent: `JSON.stringify`,
 * `Object.keys` and spreads still see exactly the API's JSON (what you store, compare or forward), and the two
 * names can never disagree. The snake_case names are the wire form; new code should read the camelCase ones.
 */

/** Fields the API gives in seconds without saying so in their names. */
const SECONDS_FIELDS = new Set(['execution_time', 'cpu_time']);

type CamelName<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelName<Tail>>}` : S;

/** The camelCase name of a snake_case field (`…_seconds` and seconds-valued fields become `…Ms`). */
export type CamelField<K extends string> = K extends `${infer Stem}_seconds`
  ? `${CamelName<Stem>}Ms`
  : K extends 'execution_time' | 'cpu_time'
    ? `${CamelName<K>}Ms`
    : CamelName<K>;

/** `T` with a camelCase alias of each snake_case field, all the way down. */
export type WithCamelCase<T> = T extends readonly (infer Item)[]
  ? WithCamelCase<Item>[]
  : T extends object
    ? { [K in keyof T]: WithCamelCase<T[K]> } & {
        readonly [K in keyof T as K extends `${string}_${string}` ? CamelField<K> : never]: WithCamelCase<T[K]>;
      }
    : T;

const SNAKE_FIELD = /^[a-z][a-z0-9]*(_[a-z0-9]+)+$/;

function camelName(field: string): string {
  const stem = field.endsWith('_seconds') ? field.slice(0, -'_seconds'.length) : field;
  const camel = stem.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
  return field.endsWith('_seconds') || SECONDS_FIELDS.has(field) ? `${camel}Ms` : camel;
}

/** Adds the camelCase getters to an answer, in place, and answers it. */
export function withCamelCase<T>(value: T): WithCamelCase<T> {
  addGetters(value, 0);
  return value as WithCamelCase<T>;
}

/**
 * The camelCase getter of each snake_case field name, made once per name and shared by every object that has the
 * field (answers repeat the same names thousands of times: a directory listing, a page of records); null for a name
 * that has none.
 */
const DESCRIPTORS = new Map<string, { alias: string; descriptor: PropertyDescriptor } | null>();

function descriptorOf(field: string): { alias: string; descriptor: PropertyDescriptor } | null {
  let known = DESCRIPTORS.get(field);
  if (known !== undefined) return known;
  known = null;
  if (SNAKE_FIELD.test(field) || SECONDS_FIELDS.has(field)) {
    const alias = camelName(field);
    const inMs = alias.endsWith('Ms') && !field.endsWith('_ms');
    const get = inMs
      ? function (this: Record<string, unknown>) {
          const raw = this[field];
          return typeof raw === 'number' ? raw * 1000 : raw;
        }
      : function (this: Record<string, unknown>) {
          return this[field];
        };
    if (alias !== field) known = { alias, descriptor: { enumerable: false, configurable: true, get } };
  }
  // Field names come from the API's documents; the bound only keeps a stream of odd keys from growing the cache.
  if (DESCRIPTORS.size < 10_000) DESCRIPTORS.set(field, known);
  return known;
}

function addGetters(value: unknown, depth: number): void {
  // Answers are a few levels deep; the bound only guards against a pathological document.
  if (value === null || typeof value !== 'object' || depth > 32) return;
  if (Array.isArray(value)) {
    for (const item of value) addGetters(item, depth + 1);
    return;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return;
  const record = value as Record<string, unknown>;
  for (const field of Object.keys(record)) {
    const child = record[field];
    if (child !== null && typeof child === 'object') addGetters(child, depth + 1);
    const known = descriptorOf(field);
    if (!known || Object.prototype.hasOwnProperty.call(record, known.alias)) continue;
    Object.defineProperty(record, known.alias, known.descriptor);
  }
}
