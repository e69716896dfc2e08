/**
 * The warm command path (issue 35) through the real agent on the host: a command for `bash -c` (what executions and
 * processes run) or for the default shell (`bash -lc`) runs in the spare shell of that kind the agent started
 * ahead of it (its pid is the spare's), and keeps what a cold bash gives a command: its exit code, its environment (the request's entries, then the login profile read at command
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

type Kind = 'plain' | 'login';
/** The shell a request names for each kind of spare (the login kind serves the default shell). */
const SHELL: Record<Kind, string[] | undefined> = { plain: ['/bin/bash', '-c'], login: undefined };

/** The agent's spare shells of a kind: its children running the bootstrap (`bash [--login --noprofile] -c …`). */
function sparesOf(agentPid: number, kind: Kind): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const ppid = Number(fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]);
        const argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return ppid === agentPid && argv.some((arg) => arg.includes('__sandboxd_command')) && argv.includes('--login') === (kind === 'login');
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
  const nextSpare = async (kind: Kind = 'plain'): Promise<number> => {
    for (let i = 0; i < 100; i++) {
      const spares = sparesOf(agent.process.pid!, kind);
      if (spares.length === 1) return spares[0]!;
      await delay(50);
    }
    throw new Error(`the agent keeps no ${kind} spare shell (${sparesOf(agent.process.pid!, kind).length} found)`);
  };
  /** Runs `command` warm: asserts it ran in the spare that was ready, and returns what it printed and how it ended. */
  const warm = async (command: string, options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {}, kind: Kind = 'plain') => {
    const spare = await nextSpare(kind);
    const shell = SHELL[kind];
    const exec = client.exec({ command, ...options, ...(shell ? { shell } : {}) });
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

  for (const kind of ['plain', 'login'] as const) {
    it(`gives a command the environment a cold ${kind === 'login' ? 'bash -lc' : 'bash -c'} gives it`, async () => {
      const home = fs.mkdtempSync(path.join(agent.dir, 'home-'));
      fs.writeFileSync(path.join(home, '.profile'), 'export FROM_PROFILE="profile saw $GREETING"\n');
      const env = { GREETING: 'hi there', HOME: home };
      // Everything exported, and what bash itself sets, warm and cold (`_` names the last command, which differs).
      const command = 'env -u _ | sort; echo "$0|$SHLVL|${OLDPWD-unset}|$PWD|$-"; shopt -q login_shell && echo login';
      const { stdout } = await warm(command, { env }, kind);
      const cold = await client.exec({ command, env, shell: ['/bin/bash', kind === 'login' ? '-lc' : '-c'] }).collect();
      assert.equal(stdout, cold.stdout.toString());
      assert.match(stdout, /^GREETING=hi there$/m);
      if (kind === 'plain') {
        assert.doesNotMatch(stdout, /FROM_PROFILE|^login$/m, 'bash -c reads no profile');
        return;
      }
      assert.match(stdout, /^FROM_PROFILE=profile saw hi there$/m);
      assert.match(stdout, /^login$/m);
      // An edit between two commands counts, as it would for a fresh bash -lc.
      fs.writeFileSync(path.join(home, '.profile'), 'export FROM_PROFILE=edited\n');
      assert.equal((await warm('echo $FROM_PROFILE', { env: { HOME: home } }, 'login')).stdout, 'edited\n');
    });
  }

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
    const cold = client.exec({ command: 'echo $SHELLOPTS', env: { SHELLOPTS: 'braceexpand' }, shell: ['/bin/bash', '-c'] });
    assert.notEqual(await cold.pid, spare, 'SHELLOPTS is read by bash at start: a cold bash');
    assert.equal((await cold.collect()).result.exitCode, 0);
    for (const shell of [
      ['/bin/sh', '-c'],
      ['/bin/bash', '-xc'],
    ]) {
      const other = client.exec({ command: 'echo $$', shell });
      assert.notEqual(await other.pid, spare, `${shell.join(' ')}: cold`);
      await other.collect();
    }
    assert.equal(await nextSpare(), spare, 'the spare is still there');
  });

  it('commands at once: one takes the spare, the others run cold, all succeed', async () => {
    await nextSpare();
    const runs = await Promise.all(Array.from({ length: 4 }, (_, i) => client.exec({ command: `echo ${i}`, shell: ['/bin/bash', '-c'] }).collect()));
    assert.deepEqual(
      runs.map((r) => [r.stdout.toString(), r.result.exitCode]),
      [0, 1, 2, 3].map((i) => [`${i}\n`, 0]),
    );
  });
});
