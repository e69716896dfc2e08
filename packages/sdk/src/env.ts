/** Environment variables where there are any (Node.js); browsers have none. */
export function readEnv(name: string): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.[name];
  return value === undefined || value === '' ? undefined : value;
}
