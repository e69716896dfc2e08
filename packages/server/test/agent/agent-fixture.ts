/**
 * Runs the real agent as a child process on the host with the unix transport, and connects `AgentClient`s to
 * it. System changes are off (the privileged helper must not set the host's clock or hostname); exec CPU
 * accounting uses a private cgroup under the host's cgroup v2 mount when there is one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AgentClient, type ConnectOptions } from '../../src/agent/index.ts';

const AGENT_MAIN = fileURLToPath(new URL('../../../agent/src/main.ts', import.meta.url));
// The agent imports its guest Python files as text; under tsx these hooks load them (esbuild inlines them).
const TEXT_IMPORTS = fileURLToPath(new URL('../../../agent/tsx/register.mjs', import.meta.url));
// The repository root: `--import tsx` resolves from the working directory.
const REPO_ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** A running agent process. */
export interface AgentFixture {
  /** The socket the agent listens on (like QEMU's chardev socket in a VM). */
  socketPath: string;
  /** A scratch directory for the test's files. */
  dir: string;
  /** Everything the agent printed to stdout and stderr (the "serial console"). */
  console: string[];
  process: ChildProcess;
  /** The cgroup directory of exec accounting, or null when the host has no cgroup v2. */
  cgroupRoot: string | null;
  connect(options?: ConnectOptions): Promise<AgentClient>;
  stop(): Promise<void>;
}

let counter = 0;

/** Kills what still runs in the test's exec cgroups (background jobs of tests) and removes them. */
async function removeCgroupTree(root: string): Promise<void> {
  const groups = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const group of groups.filter((entry) => entry.isDirectory())) {
    const dir = join(root, group.name);
    await writeFile(join(dir, 'cgroup.kill'), '1').catch(() => undefined);
    for (let attempt = 0; attempt < 50; attempt++) {
      if (
        await rmdir(dir).then(
          () => true,
          () => false,
        )
      )
        break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  await rmdir(root).catch(() => undefined);
}

async function cgroup2Mount(): Promise<string | null> {
  const mounts = await readFile('/proc/self/mounts', 'utf8').catch(() => '');
  for (const line of mounts.split('\n')) {
    const [, mountPoint, type] = line.split(' ');
    if (type === 'cgroup2' && mountPoint) return mountPoint;
  }
  return null;
}

/**
 * How the agent is run: from source by default. `SANDBOXD_TEST_AGENT_COMMAND` (a JSON array) runs something
 * else through the same tests, e.g. the bundle under the guest's Node 18 in a chroot of the guest root
 * filesystem whose /tmp, /proc, /sys and /dev are bind mounts of the host's:
 * `["chroot", "/path/to/rootfs", "node", "/opt/sandboxd/agent.mjs"]`.
 */
function defaultCommand(): string[] {
  const override = process.env.SANDBOXD_TEST_AGENT_COMMAND;
  return override ? (JSON.parse(override) as string[]) : [process.execPath, '--import', 'tsx', '--import', TEXT_IMPORTS, AGENT_MAIN];
}

/** Starts an agent; `args` are added to its command line. */
export async function startAgent(args: string[] = [], command: string[] = defaultCommand()): Promise<AgentFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'sandboxd-agent-test-'));
  const socketPath = join(dir, 'agent.sock');
  const mount = await cgroup2Mount();
  const cgroupRoot = mount && process.getuid?.() === 0 ? join(mount, `sandboxd-agent-test-${process.pid}-${++counter}`) : null;
  const child = spawn(
    command[0] as string,
    [...command.slice(1), '--transport', `unix:${socketPath}`, '--no-system-changes', '--cgroup-root', cgroupRoot ?? 'off', ...args],
    // HOME is the default working directory of execs and Python kernels, as /root is in a VM.
    { cwd: REPO_ROOT, env: { ...process.env, HOME: dir }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  const collect = (chunk: Buffer): void => {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  };
  child.stderr?.on('data', collect);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the agent did not start within 30 s:\n${lines.join('\n')}`)), 30_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      collect(chunk);
      if (lines.includes('sandboxd-stage: agent')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the agent exited with ${code}:\n${lines.join('\n')}`));
    });
  });
  const clients: AgentClient[] = [];
  return {
    socketPath,
    dir,
    console: lines,
    process: child,
    cgroupRoot,
    async connect(options) {
      const client = await AgentClient.connect({ socketPath }, options);
      clients.push(client);
      return client;
    },
    async stop() {
      await Promise.all(clients.map((client) => client.close()));
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
      if (cgroupRoot) await removeCgroupTree(cgroupRoot);
    },
  };
}
