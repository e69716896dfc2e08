/** Installing the vault CA in a guest without a VM: the guest's stderr kept for the error message is capped (L-8). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { installGuestCa } from '../../src/core/vault/vault-ca.ts';
import type { GuestAgent } from '../../src/core/vm-engine.ts';

test('a guest that floods stderr while the CA install fails costs the host at most 4 KiB of it', async () => {
  const chunk = Buffer.alloc(64 * 1024, 'e');
  let sent = 0;
  // A guest is not trusted: its (replaceable) agent answers with 64 MiB of stderr and a failure.
  const agent = {
    exec: async (_request: unknown, output: { onStderr(chunk: Buffer): void }) => {
      for (let i = 0; i < 1024; i++) {
        output.onStderr(chunk);
        sent += chunk.length;
      }
      return { exitCode: 1, signal: null, timedOut: false, durationMs: 1 };
    },
  } as unknown as GuestAgent;
  const failure = await installGuestCa(agent, '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----').then(
    () => assert.fail('a failed install must throw'),
    (error: Error) => error,
  );
  assert.equal(sent, 64 * 1024 * 1024);
  assert.match(failure.message, /^the vault CA could not be installed in the guest \(exit 1\): e+$/);
  assert.ok(failure.message.length < 4096 + 100, `${failure.message.length} characters kept`);
});
