/**
 * The Python that runs in the guest lives in `.py` files (linted and formatted as Python) and is imported as
 * text: `import source from './file.py'`. esbuild inlines it into the one-file bundle (`--loader:.py=text`); from
 * source under tsx, `tsx/register.mjs` loads it.
 */
declare module '*.py' {
  const source: string;
  export default source;
}
