// test-lane: light (no VM: the watcher's output is played by a stand-in agent, byte for byte)
/**
 * What the directory watcher prints is the guest's to choose: a user may replace python3 in their VM. Its lines go
 * through `watchDirectory` (core/file-watch.ts) as a hostile guest could write them: garbage, JSON of the wrong
 * shape, unknown event types, a line with no end, a flood. Nothing of it throws in the server, only well-formed
 * events come out, and memory stays bounded (the real watcher on real VMs: files.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { watchDirectory } from '../../src/core/file-watch.ts';
import type { ExecOutput, GuestAgent } from '../../src/core/vm-engine.ts';

/** An agent whose exec prints `chunks` on stdout, then runs until aborted. */
function agentPrinting(chunks: string[]): GuestAgent {
  return {
    exec: (_request: unknown, output: ExecOutput, signal?: AbortSignal) =>
      new Promise((resolve) => {
        for (const chunk of chunks) output.onStdout(Buffer.from(chunk));
        signal?.addEventListener('abort', () => resolve({ exitCode: null, signal: 'SIGKILL', timedOut: false, durationMs: 1 } as never), { once: true });
      }),
  } as unknown as GuestAgent;
}

async function collect(events: AsyncIterable<unknown>, count: number): Promise<unknown[]> {
  const seen: unknown[] = [];
  for await (const event of events) {
    seen.push(event);
    if (seen.length === count) break;
  }
  return seen;
}

test('garbage, wrong shapes, unknown types and an endless line are skipped; only real events come out', async () => {
  const controller = new AbortController();
  const agent = agentPrinting([
    '{"type":"ready"}\nnot json at all\nnull\n[1,2]\n"text"\n',
    '{"type":"evil","path":"/x"}\n{"type":"create"}\n{"type":"write","path":42}\n',
    'x'.repeat(200_000), // no newline: dropped once it is past the bound
    'still the same line\n{"type":"create","path":"/root/a","is_dir":false}\n{"type":"error","message":{"a":1}}\n',
  ]);
  const watch = await watchDirectory(agent, '/root', { recursive: false, signal: controller.signal });
  const events = await collect(watch, 2);
  controller.abort();
  assert.deepEqual(events, [
    { type: 'create', path: '/root/a', isDir: false },
    { type: 'error', message: '[object Object]' },
  ]);
});

test('a flood past the bound is held to 10,000 events and one overflow', async () => {
  const controller = new AbortController();
  const line = '{"type":"write","path":"/root/f","is_dir":false}\n';
  const agent = agentPrinting(['{"type":"ready"}\n', line.repeat(25_000)]);
  const watch = await watchDirectory(agent, '/root', { recursive: false, signal: controller.signal });
  const events = (await collect(watch, 10_001)) as { type: string }[];
  controller.abort();
  assert.equal(events.length, 10_001);
  assert.equal(events.filter((e) => e.type === 'write').length, 10_000);
  assert.deepEqual(events.at(-1), { type: 'overflow' });
});
