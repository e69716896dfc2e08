import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGuestPath, parseMode } from '../src/files/guest-path.ts';
import { AgentFailure } from '../src/http/agent-failure.ts';

describe('guest paths', () => {
  it('normalizes absolute paths', () => {
    assert.equal(parseGuestPath('/a//b/../c/'), '/a/c');
    assert.equal(parseGuestPath('/'), '/');
  });

  it('rejects relative, empty and NUL-containing paths with INVALID_PATH', () => {
    for (const bad of ['relative', './x', '', 'a/../b', '/tmp/a\0b', 42, null]) {
      assert.throws(
        () => parseGuestPath(bad),
        (error: unknown) => error instanceof AgentFailure && error.code === 'INVALID_PATH',
        String(bad),
      );
    }
  });

  it('parses octal modes', () => {
    assert.equal(parseMode('644', 0), 0o644);
    assert.equal(parseMode('0755', 0), 0o755);
    assert.equal(parseMode(null, 0o600), 0o600);
    assert.throws(() => parseMode('999', 0), AgentFailure);
  });
});
