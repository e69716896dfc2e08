/** Usage, restore fix-ups and the serial console, through the real agent (system changes off on a host). */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { AgentClient } from '../../src/agent/index.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

describe('agent system operations', () => {
  let agent: AgentFixture;
  let client: AgentClient;
  before(async () => {
    agent = await startAgent();
    client = await agent.connect();
  });
  after(() => agent.stop());

  it('reports guest CPU, memory and uptime from /proc', async () => {
    const usage = await client.usage();
    assert.ok(usage.cpu.count >= 1);
    assert.ok(usage.cpu.busySeconds > 0);
    assert.ok(usage.memory.totalBytes > usage.memory.availableBytes);
    assert.equal(usage.memory.usedBytes, usage.memory.totalBytes - usage.memory.availableBytes);
    assert.ok(usage.uptimeSeconds > 0);
    assert.equal(usage.loadAverage.length, 3);
  });

  it('adopts the VM id of a restore and reports it in the handshake', async () => {
    const restored = await client.restore({ hostname: 'clone-7', vmId: 'vm-clone-7' });
    assert.equal(restored.applied, false, 'the test agent runs with --no-system-changes');
    assert.equal(restored.vmId, 'vm-clone-7');
    assert.equal(restored.entropyBytes, 256);
    assert.equal((await client.hello()).vmId, 'vm-clone-7');
  });

  it('reseeds the random state of running Python interpreters, so clones do not share it', async () => {
    // Two clones of one snapshot start with identical interpreter memory; emulate that with a fixed seed.
    await client.runPython({ contextId: 'rng', code: 'import random\nrandom.seed(1234)' });
    const unrestored = await client.runPython({ contextId: 'rng-reference', code: 'import random\nrandom.seed(1234)\nrandom.random()' });
    const restored = await client.restore({ hostname: 'clone-8', vmId: 'vm-clone-8' });
    assert.ok(restored.reseededKernels >= 2, `reseeded ${restored.reseededKernels}`);
    const after = await client.runPython({ contextId: 'rng', code: 'random.random()' });
    assert.notEqual(after.result, unrestored.result);
  });

  it('rejects restores without enough entropy or with a bad hostname', async () => {
    await assert.rejects(client.restore({ hostname: 'ok', vmId: 'vm', entropy: randomBytes(32) }), { code: 'BAD_REQUEST' });
    await assert.rejects(client.restore({ hostname: 'bad host name', vmId: 'vm' }), { code: 'BAD_REQUEST' });
    await assert.rejects(client.restore({ hostname: 'ok', vmId: 'bad id!' }), { code: 'BAD_REQUEST' });
  });

  it(
    'sets the wall clock, credits the entropy and sets the hostname in the guest',
    { skip: 'needs a VM: it would change the host clock and hostname' },
    () => {},
  );

  it('prints the stage marker and nothing of what it runs to the console', async () => {
    const secret = `s3cret-${randomBytes(8).toString('hex')}`;
    await client.exec({ argv: ['sh', '-c', 'echo "$TOKEN"; echo "$TOKEN" >&2'], env: { TOKEN: secret } }).collect();
    await client.runPython({ contextId: 'console', code: `token = "${secret}"\nprint(token)\nraise RuntimeError(token)` });
    await client.writeFile(`${agent.dir}/secret.txt`, secret);
    assert.ok(agent.console.includes('sandboxd-stage: agent'));
    assert.ok(!agent.console.some((line) => line.includes(secret)), `console: ${agent.console.join('\n')}`);
  });
});
