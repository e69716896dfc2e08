/**
 * The warm command path (issue 35) through the real agent on the host: a command for the default shell runs in
 * the spare login shell the agent started ahead of it (its pid is the spare's), and keeps what a cold `bash -lc`
 * gives a command: its exit code, its environment (the request's entries, then the login profile read at command
 * time), its working directory, its own cgroup with the per-program process limit, its own process group (a
 * deadline kills everything it started), a signal that ends the command, and `$$`/`$RANDOM` of its own.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { AgentClient } from '../../src/agent/index.ts';
import { startAgent, type AgentFixture } from './agent-fixture.ts';

/** The agent's spare shells: its children running the bootstrap (`bash --login --noprofile -c …`). */
function sparesOf(agentPid: number): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const ppid = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
        return ppid === agentPid && fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('__sandboxd_command');
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('agent exec: the warm path (spare login shells)', () => {
  let agent: AgentFixture;
  let client: AgentClient;
  /** The spare ready now (waits for the refill after a take). */
  const nextSpare = async (): Promise<number> => {
    for (let i = 0; i < 100; i++) {
      const spares = sparesOf(agent.process.pid!);
      if (spares.length === 1) return spares[0]!;
      await delay(50);
    }
    throw new Error(`the agent keeps no spare shell (${sparesOf(agent.process.pid!).length} found)`);
  };
  /** Runs `command` warm: asserts it ran in the spare that was ready, and returns what it printed and how it ended. */
  const warm = async (command: string, options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}) => {
    const spare = await nextSpare();
    const exec = client.exec({ command, ...options });
    const pid = await exec.pid;
    const collected = await exec.collect();
    assert.equal(pid, spare, `"${command}" ran in the spare shell`);
    return { pid, stdout: collected.stdout.toString(), stderr: collected.stderr.toString(), result: collected.result };
  };

  before(async () => {
    agent = await startAgent(['--no-prestart-python']);
    client = await agent.connect();
  });
  after(() => agent.stop());

  it('keeps the exit code, separates the streams, and $$ is the command’s own pid', async () => {
    const { pid, stdout, stderr, result } = await warm('echo out; echo err >&2; echo $$; exit 7');
    assert.equal(stdout, `out\n${pid}\n`);
    assert.equal(stderr, 'err\n');
    assert.deepEqual([result.exitCode, result.signal, result.timedOut], [7, null, false]);
  });

  it('gives a command the environment a cold bash -lc gives it: the request’s entries, then the login profile', async () => {
    const home = fs.mkdtempSync(path.join(agent.dir, 'home-'));
    fs.writeFileSync(path.join(home, '.profile'), 'export FROM_PROFILE="profile saw $GREETING"\n');
    const env = { GREETING: 'hi there', HOME: home };
    // Everything exported, and what bash itself sets, warm and cold (`_` names the last command, which differs).
    const command = 'env -u _ | sort; echo "$0|$SHLVL|${OLDPWD-unset}|$PWD"; shopt -q login_shell && echo login';
    const { stdout } = await warm(command, { env });
    const cold = await client.exec({ command, env, shell: ['/bin/bash', '-lc'] }).collect();
    assert.equal(stdout, cold.stdout.toString());
    assert.match(stdout, /^FROM_PROFILE=profile saw hi there$/m);
    assert.match(stdout, /^login$/m);
    // An edit between two commands counts, as it would for a fresh bash -lc.
    fs.writeFileSync(path.join(home, '.profile'), 'export FROM_PROFILE=edited\n');
    assert.equal((await warm('echo $FROM_PROFILE', { env: { HOME: home } })).stdout, 'edited\n');
  });

  it('runs in the requested working directory', async () => {
    const dir = fs.mkdtempSync(path.join(agent.dir, 'cwd-'));
    assert.equal((await warm('pwd; echo $PWD', { cwd: dir })).stdout, `${dir}\n${dir}\n`);
  });

  it('runs in a cgroup of its own under the user programs’ root, with the per-program process limit', async (t) => {
    if (!agent.cgroupRoot) {
      t.skip('no cgroup v2 on this host');
      return;
    }
    const { stdout } = await warm('cat /proc/self/cgroup');
    const group = /^0::(.*)$/m.exec(stdout)?.[1];
    assert.ok(group, stdout);
    const mount = agent.cgroupRoot.slice(0, agent.cgroupRoot.length - agent.cgroupRoot.split('/').pop()!.length - 1);
    const dir = path.join(agent.cgroupRoot, path.basename(group));
    assert.ok(group.endsWith(`/${path.basename(agent.cgroupRoot)}/${path.basename(group)}`), `${group} is under ${agent.cgroupRoot} (${mount})`);
    assert.match(path.basename(dir), /^exec-\d+$/);
  });

  it('a deadline kills the whole process group, background jobs included', async () => {
    const marker = path.join(agent.dir, 'warm-survivor');
    const { result } = await warm(`(sleep 2; touch ${marker}) & sleep 30`, { timeoutMs: 300 });
    assert.deepEqual([result.timedOut, result.signal], [true, 'SIGKILL']);
    await delay(2500);
    assert.equal(fs.existsSync(marker), false, 'the background job outlived the deadline');
  });

  it('a command that kills itself ends with that signal; CPU before the command is not counted', async () => {
    const { result } = await warm('kill -TERM $$');
    assert.deepEqual([result.exitCode, result.signal], [null, 'SIGTERM']);
    const idle = await warm('sleep 0.2');
    if (idle.result.cpu) assert.ok(idle.result.cpu.totalMs < 100, `a sleeping command used ${idle.result.cpu.totalMs} ms of CPU`);
  });

  it('each command gets a fresh $RANDOM seed; a request bash reads at start, or another shell, runs cold', async () => {
    const first = await warm('echo $RANDOM $RANDOM');
    const second = await warm('echo $RANDOM $RANDOM');
    assert.notEqual(first.stdout, second.stdout);
    const spare = await nextSpare();
    const cold = client.exec({ command: 'echo $SHELLOPTS', env: { SHELLOPTS: 'braceexpand' } });
    assert.notEqual(await cold.pid, spare, 'SHELLOPTS is read by bash at start: a cold bash');
    assert.equal((await cold.collect()).result.exitCode, 0);
    const sh = client.exec({ command: 'echo $$', shell: ['/bin/sh', '-c'] });
    assert.notEqual(await sh.pid, spare, 'another shell: cold');
    await sh.collect();
  });

  it('commands at once: one takes the spare, the others run cold, all succeed', async () => {
    await nextSpare();
    const runs = await Promise.all(Array.from({ length: 4 }, (_, i) => client.exec({ command: `echo ${i}` }).collect()));
    assert.deepEqual(
      runs.map((r) => [r.stdout.toString(), r.result.exitCode]),
      [0, 1, 2, 3].map((i) => [`${i}\n`, 0]),
    );
  });
});
