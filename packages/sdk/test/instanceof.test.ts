/**
 * `instanceof` works across two separately loaded copies of the package (two bundles, or two versions in
 * node_modules): each copy has its own classes, and errors from one are recognised by the other's.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as SdkModule from '../src/index.ts';

type Sdk = typeof SdkModule;

const SOURCE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

/** Loads a private copy of the sources from its own directory, so nothing is shared with other copies. */
async function loadCopy(dir: string): Promise<Sdk> {
  fs.cpSync(SOURCE, dir, { recursive: true });
  return (await import(pathToFileURL(path.join(dir, 'index.ts')).href)) as Sdk;
}

describe('instanceof across two copies of the package', () => {
  let root: string;
  let a: Sdk;
  let b: Sdk;

  before(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-sdk-copies-'));
    a = await loadCopy(path.join(root, 'a'));
    b = await loadCopy(path.join(root, 'b'));
  });
  after(() => fs.rmSync(root, { recursive: true, force: true }));

  test('the copies really are separate', () => {
    assert.notEqual(a.RateLimitError, b.RateLimitError);
    assert.notEqual(a.SandboxdError, b.SandboxdError);
  });

  test("an error made by one copy is an instance of the other copy's class and its bases", () => {
    const error = new a.RateLimitError('slow down', { status: 429, code: 'RATE_LIMITED', retryAfter: 3 });
    assert.ok(error instanceof b.RateLimitError);
    assert.ok(error instanceof b.SandboxdError);
    assert.ok(error instanceof Error);
    assert.ok(!(error instanceof b.QuotaExceededError));
    assert.ok(!(error instanceof b.AuthenticationError));
    assert.equal(error.retryAfter, 3);
  });

  test('deep hierarchies: ElementNotFoundError is a BrowserInteractionError and a BrowserError, not a BrowserTimeoutError', () => {
    const error = new b.ElementNotFoundError('no such element', { selector: '#go' });
    assert.ok(error instanceof a.ElementNotFoundError);
    assert.ok(error instanceof a.BrowserInteractionError);
    assert.ok(error instanceof a.BrowserError);
    assert.ok(error instanceof a.SandboxdError);
    assert.ok(!(error instanceof a.BrowserTimeoutError));
    assert.ok(!(error instanceof a.BrowserSessionError));
    assert.equal(error.selector, '#go');
    assert.equal(error.name, 'ElementNotFoundError');
  });

  test('errors from the table of one copy are recognised by the other', () => {
    const classes: [number, string | undefined, string | undefined, keyof Sdk][] = [
      [401, 'INVALID_CREDENTIALS', undefined, 'AuthenticationError'],
      [403, 'FORBIDDEN', 'kill', 'AuthenticationError'],
      [404, 'NOT_FOUND', 'session', 'SessionError'],
      [404, 'NOT_FOUND', undefined, 'NotFoundError'],
      [404, 'ELEMENT_NOT_FOUND', 'browser.element', 'ElementNotFoundError'],
      [404, 'NOT_FOUND', 'browser.element', 'BrowserSessionError'],
      [404, undefined, 'browser.navigate', 'BrowserSessionError'],
      [400, 'NAVIGATION_FAILED', 'browser.navigate', 'BrowserNavigationError'],
      [408, 'EXECUTION_TIMEOUT', 'execute', 'ExecutionError'],
      [408, 'BROWSER_TIMEOUT', 'browser.element', 'BrowserTimeoutError'],
      [408, undefined, 'browser.navigate', 'BrowserTimeoutError'],
      [422, undefined, undefined, 'ValidationError'],
      [429, 'RATE_LIMITED', undefined, 'RateLimitError'],
      [429, 'QUOTA_EXCEEDED', undefined, 'QuotaExceededError'],
      [429, undefined, 'browser.session.create', 'QuotaExceededError'],
      [501, 'NOT_IMPLEMENTED', undefined, 'UnsupportedOperationError'],
      [503, 'VM_UNAVAILABLE', 'execute', 'NetworkError'],
      [400, 'BAD_REQUEST', undefined, 'SandboxdError'],
    ];
    for (const [status, code, kind, name] of classes) {
      const error = a.errorFor({ status, code, kind: kind as never }, 'x', { status, ...(code ? { code } : {}) });
      const expected = b[name] as unknown as abstract new (...args: never[]) => unknown;
      assert.ok(error instanceof expected, `${status} ${code ?? ''} ${kind ?? ''} → ${String(name)}, got ${error.name}`);
      assert.equal(error.name, name);
    }
  });

  test('things that are not ours are not instances', () => {
    assert.ok(!(new Error('x') instanceof a.SandboxdError));
    assert.ok(!((null as unknown) instanceof a.SandboxdError));
    assert.ok(!({ name: 'RateLimitError' } instanceof a.RateLimitError));
    assert.ok(!(Object.assign(new Error('x'), { kinds: ['SandboxdError'] }) instanceof b.SandboxdError));
  });
});
