/**
 * Durations: every option of this client is in milliseconds (`…Ms`), as in E2B's and most JavaScript APIs, while
 * the REST API takes whole seconds. The options named in seconds (`timeout` of execute, `…Seconds`) came first and
 * still work, deprecated; giving both names of one option is an error rather than a silent choice.
 */

/**
 * The API's whole seconds for an option given as `ms` (rounded up) or, deprecated, as `seconds`; undefined when
 * neither is given. `names` are the option's two names, for the error messages.
 */
export function wholeSeconds(ms: number | undefined, seconds: number | undefined, names: readonly [msName: string, secondsName: string]): number | undefined {
  if (ms !== undefined && seconds !== undefined) throw new TypeError(`give ${names[0]} or ${names[1]} (deprecated), not both`);
  if (ms === undefined) return seconds;
  if (!Number.isFinite(ms) || ms <= 0) throw new RangeError(`${names[0]} must be a positive number of milliseconds, got ${ms}`);
  return Math.ceil(ms / 1000);
}

/** `{ [key]: whole seconds }` for a request body, or `{}` when the option was not given (see {@link wholeSeconds}). */
export function secondsField<K extends string>(
  key: K,
  ms: number | undefined,
  seconds: number | undefined,
  names: readonly [msName: string, secondsName: string],
): Partial<Record<K, number>> {
  const value = wholeSeconds(ms, seconds, names);
  return value === undefined ? {} : ({ [key]: value } as Partial<Record<K, number>>);
}
