/**
 * `env_vars` of one Python run. The interpreter is a long-lived process, so, as E2B's own server does, the
 * variables are set in it before the run and put back after it: to the sandbox's own value when it has one (its
 * `envVars` at create), else removed. Both steps are runs of their own in the same context. The values travel as
 * base64 of JSON, so no value can break out of the Python string they are written into.
 */

function decoded(payload: Record<string, unknown>): string {
  const encoded = Buffer.from(JSON.stringify(payload), 'utf8').toString('base64');
  return `__import__('json').loads(__import__('base64').b64decode('${encoded}').decode('utf-8'))`;
}

/** Python that sets `vars` in the interpreter's `os.environ`. */
export function setEnvCode(vars: Record<string, string>): string {
  return `__import__('os').environ.update(${decoded(vars)})`;
}

/** Python that puts the names of `vars` back as `sandboxEnv` has them (or removes them). */
export function resetEnvCode(vars: Record<string, string>, sandboxEnv: Record<string, string>): string {
  const restore: Record<string, string | null> = {};
  for (const name of Object.keys(vars)) restore[name] = Object.hasOwn(sandboxEnv, name) ? sandboxEnv[name]! : null;
  // A comprehension, so `k` and `v` stay out of the user's namespace; `.clear()` makes the cell's value None (no result).
  return (
    `[__import__('os').environ.pop(k, None) if v is None else __import__('os').environ.__setitem__(k, v) ` + `for k, v in ${decoded(restore)}.items()].clear()`
  );
}
