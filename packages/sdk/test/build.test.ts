/**
 * The published shape: `tsc -p tsconfig.build.json` gives ESM + declarations that run on plain Node.js
 * (no tsx), use nothing Node-only (so browsers can load them), and two copies of the built files still
 * recognise each other's errors.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { VERSION } from '../src/index.ts';

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const TSC = path.resolve(PACKAGE, '../../node_modules/typescript/bin/tsc');

function filesUnder(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

describe('the built package', () => {
  let out: string;

  before(() => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'sandboxd-sdk-build-'));
    execFileSync(process.execPath, [TSC, '-p', path.join(PACKAGE, 'tsconfig.build.json'), '--outDir', path.join(out, 'dist')], { stdio: 'pipe' });
  });
  after(() => fs.rmSync(out, { recursive: true, force: true }));

  test('package.json: version 0.3.0 (as the code says), ESM, exports pointing at dist with a source condition', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE, 'package.json'), 'utf8'));
    assert.equal(pkg.name, '@sandboxd/sdk');
    assert.equal(pkg.version, '0.3.0');
    assert.equal(VERSION, pkg.version);
    assert.equal(pkg.type, 'module');
    assert.deepEqual(pkg.exports['.'], { '@sandboxd/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' });
    assert.deepEqual(pkg.dependencies ?? {}, {}, 'no runtime dependencies');
    for (const file of ['index.js', 'index.d.ts', 'generated/openapi.d.ts']) assert.ok(fs.existsSync(path.join(out, 'dist', file)), file);
  });

  test('the JavaScript uses nothing Node-only, so it loads in browsers', () => {
    for (const file of filesUnder(path.join(out, 'dist')).filter((f) => f.endsWith('.js'))) {
      const text = fs.readFileSync(file, 'utf8');
      assert.doesNotMatch(text, /from ["']node:|require\(|\bBuffer\b/, path.relative(out, file));
    }
  });

  test("runs on plain Node.js, and two copies recognise each other's errors", () => {
    for (const copy of ['a', 'b']) {
      fs.mkdirSync(path.join(out, copy));
      fs.cpSync(path.join(out, 'dist'), path.join(out, copy, 'dist'), { recursive: true });
      fs.writeFileSync(path.join(out, copy, 'package.json'), JSON.stringify({ type: 'module' }));
    }
    const script = `
      const a = await import('./a/dist/index.js');
      const b = await import('./b/dist/index.js');
      const client = new a.Sandboxd({ baseUrl: 'http://127.0.0.1:1/', apiKey: 'k', maxRetries: 0 });
      const error = await client.apiKeys.list().catch((e) => e);
      console.log(JSON.stringify({
        separate: a.SandboxdError !== b.SandboxdError,
        network: error instanceof b.NetworkError,
        base: error instanceof b.SandboxdError,
        notRate: !(error instanceof b.RateLimitError),
        timeout: client.timeout, maxRetries: client.maxRetries, retryDelay: client.retryDelay,
      }));`;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: out, encoding: 'utf8' });
    assert.equal(result.status, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { separate: true, network: true, base: true, notRate: true, timeout: 300000, maxRetries: 0, retryDelay: 1000 });
  });
});
