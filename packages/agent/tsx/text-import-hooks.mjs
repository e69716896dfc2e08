/**
 * Node module hooks that load `import source from './file.py'` as a module whose default export is the file's
 * text, which is what the bundle does (esbuild's `--loader:.py=text`). tsx, which runs the agent from source in
 * tests and development, has no text loader of its own; `register.mjs` installs these hooks next to it.
 */
import { readFile } from 'node:fs/promises';

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.py')) return nextLoad(url, context);
  const text = await readFile(new URL(url), 'utf8');
  return { format: 'module', source: `export default ${JSON.stringify(text)};`, shortCircuit: true };
}
