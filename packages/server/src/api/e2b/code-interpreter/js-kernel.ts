/**
 * The JavaScript kernel of the code interpreter: a `node` process per context in the sandbox's VM that keeps one
 * `vm` context between runs (top-level declarations, imports and values stay, as in E2B's JavaScript kernel). It
 * reads one JSON request per line on stdin (`{code, env}`), runs the code, awaits a promise it ends with, and ends
 * each run with a marker line on stdout: the record separator (0x1E), the context's nonce, and the run's outcome as
 * JSON (`{text}` for the value of the last expression, `{error: {name, value, traceback}}`). The program is written
 * to the guest by the facade; nothing of the host's runs in the VM.
 */

/** Where the kernel's program is written in the guest (versioned: a changed program gets a new name). */
export const KERNEL_PATH = '/tmp/sandboxd-js-kernel-1.cjs';

/** The byte that starts the end-of-run marker (ASCII record separator). */
export const MARKER_START = '\x1e';

export const KERNEL_SOURCE = String.raw`'use strict';
const vm = require('node:vm');
const util = require('node:util');
const readline = require('node:readline');
const nonce = process.argv[2] || '';
const globals = {
  require, process, Buffer, console, module: { exports: {} }, exports: {},
  setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate, queueMicrotask,
  URL, URLSearchParams, TextEncoder, TextDecoder, AbortController, structuredClone, fetch: globalThis.fetch,
};
const context = vm.createContext(globals);
function shown(value) {
  return typeof value === 'string' ? value : util.inspect(value, { depth: 4, maxArrayLength: 200 });
}
async function run(request) {
  const answer = {};
  const saved = {};
  for (const [name, value] of Object.entries(request.env || {})) { saved[name] = process.env[name]; process.env[name] = value; }
  try {
    let value = vm.runInContext(request.code, context, { filename: 'cell.js' });
    if (value !== null && typeof value === 'object' && typeof value.then === 'function') value = await value;
    if (value !== undefined) answer.text = shown(value);
  } catch (error) {
    const object = error !== null && typeof error === 'object';
    answer.error = {
      name: object && error.name ? String(error.name) : 'Error',
      value: object && 'message' in error ? String(error.message) : shown(error),
      traceback: object && error.stack ? String(error.stack) : shown(error),
    };
  } finally {
    for (const [name, value] of Object.entries(saved)) { if (value === undefined) delete process.env[name]; else process.env[name] = value; }
  }
  process.stdout.write('\x1e' + nonce + JSON.stringify(answer) + '\n');
}
let queue = Promise.resolve();
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  queue = queue.then(() => run(JSON.parse(line)));
});
process.on('unhandledRejection', (reason) => { process.stderr.write('Unhandled rejection: ' + shown(reason) + '\n'); });
`;
