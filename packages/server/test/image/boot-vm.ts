// test-lane: heavy (boots QEMU VMs): scripts/run-tests.mjs runs what imports this one at a time.
/**
 * Test helper: boots a guest image the way the boot contract (packages/server/images/README.md) describes,
 * under TCG, with the stand-in agent's virtio-serial port on a unix socket. Not the VM driver: just enough
 * QEMU to prove the image boots.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { GuestImage } from '../../src/image/types.ts';

/** Reply of the stand-in agent (fixtures/test-agent.mjs). */
export interface AgentReply {
  id: number;
  code: number | null;
  out: string;
}

/** A running test VM. */
export interface TestVm {
  /** Milliseconds since QEMU was spawned. */
  sinceSpawnMs(): number;
  /** Resolves with the first console line matching `pattern` and the time it was seen (ms since spawn). */
  waitForConsole(pattern: RegExp, timeoutMs: number): Promise<{ line: string; atMs: number }>;
  consoleText(): Promise<string>;
  /** Runs a shell command in the guest through the stand-in agent. */
  run(cmd: string, timeoutMs?: number): Promise<AgentReply>;
  /** Kills QEMU and removes the overlay and sockets. */
  stop(): Promise<void>;
}

/** Boot options; the command line is the contract's plus `extraAppend`. */
export interface BootOptions {
  memoryMb?: number;
  net?: boolean;
  extraAppend?: string;
}

/** Boots `image` with a fresh qcow2 overlay over its rootfs. */
export async function bootTestVm(image: GuestImage, options: BootOptions = {}): Promise<TestVm> {
  const dir = await mkdtemp(join(tmpdir(), 'sandboxd-boot-'));
  const overlay = join(dir, 'root.qcow2');
  const serialLog = join(dir, 'serial.log');
  const agentSocket = join(dir, 'agent.sock');
  await runToEnd('qemu-img', ['create', '-q', '-f', 'qcow2', '-F', 'raw', '-b', image.rootfsPath, overlay]);

  const append = ['console=ttyS0', 'tsc_early_khz=2445000', 'quiet', 'rw', 'panic=-1', `sandboxd.net=${options.net === false ? 0 : 1}`];
  if (options.extraAppend) append.push(options.extraAppend);
  const args = [
    '-M',
    'microvm',
    '-accel',
    'tcg',
    '-cpu',
    'max',
    '-m',
    String(options.memoryMb ?? 512),
    '-smp',
    '1',
    '-nodefaults',
    '-no-user-config',
    '-display',
    'none',
    '-no-reboot',
    '-serial',
    `file:${serialLog}`,
    '-kernel',
    image.kernelPath,
    '-initrd',
    image.initrdPath,
    '-append',
    append.join(' '),
    '-drive',
    `file=${overlay},format=qcow2,if=none,id=root`,
    '-device',
    'virtio-blk-device,drive=root',
    '-device',
    'virtio-serial-device',
    '-chardev',
    `socket,id=agent,path=${agentSocket},server=on,wait=off`,
    '-device',
    'virtserialport,chardev=agent,name=sandboxd.agent',
    '-device',
    'virtio-rng-device',
  ];
  if (options.net !== false) args.push('-netdev', 'user,id=n0', '-device', 'virtio-net-device,netdev=n0');

  const spawnedAt = performance.now();
  const qemu = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let qemuStderr = '';
  qemu.stderr?.setEncoding('utf8');
  qemu.stderr?.on('data', (chunk: string) => {
    qemuStderr += chunk;
  });
  const exited = new Promise<void>((resolve) => qemu.once('close', () => resolve()));
  let hasExited = false;
  void exited.then(() => {
    hasExited = true;
  });

  const consoleText = async (): Promise<string> => readFile(serialLog, 'utf8').catch(() => '');
  let agent: AgentClient | undefined;

  return {
    sinceSpawnMs: () => Math.round(performance.now() - spawnedAt),
    consoleText,
    async waitForConsole(pattern, timeoutMs) {
      const deadline = performance.now() + timeoutMs;
      for (;;) {
        const line = (await consoleText()).split(/\r?\n/).find((candidate) => pattern.test(candidate));
        if (line !== undefined) return { line, atMs: Math.round(performance.now() - spawnedAt) };
        if (hasExited) throw new Error(`QEMU exited before ${pattern} appeared: ${qemuStderr}\n--- console ---\n${await consoleText()}`);
        if (performance.now() > deadline) throw new Error(`${pattern} did not appear within ${timeoutMs} ms\n--- console ---\n${await consoleText()}`);
        await sleep(50);
      }
    },
    async run(cmd, timeoutMs = 60_000) {
      agent ??= await AgentClient.connect(agentSocket, 60_000);
      return agent.request(cmd, timeoutMs);
    },
    async stop() {
      agent?.close();
      if (!hasExited) killChild(qemu);
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Client of the stand-in agent's line protocol over the port's unix socket. */
class AgentClient {
  #nextId = 1;
  #buffer = '';
  readonly #pending = new Map<number, (reply: AgentReply) => void>();
  readonly #socket: Socket;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.#buffer += chunk;
      let newline;
      while ((newline = this.#buffer.indexOf('\n')) >= 0) {
        const reply = JSON.parse(this.#buffer.slice(0, newline)) as AgentReply;
        this.#buffer = this.#buffer.slice(newline + 1);
        this.#pending.get(reply.id)?.(reply);
        this.#pending.delete(reply.id);
      }
    });
  }

  /**
   * Connects and pings until the agent answers: writes made before the guest opens its port end up nowhere,
   * so the host keeps asking.
   */
  static async connect(path: string, timeoutMs: number): Promise<AgentClient> {
    const deadline = performance.now() + timeoutMs;
    let socket: Socket | undefined;
    // QEMU creates the socket shortly after it starts.
    while (!socket) {
      socket = await new Promise<Socket | undefined>((resolve, reject) => {
        const s = connect(path, () => resolve(s));
        s.once('error', (error: NodeJS.ErrnoException) =>
          (error.code === 'ENOENT' || error.code === 'ECONNREFUSED') && performance.now() < deadline ? resolve(undefined) : reject(error),
        );
      });
      if (!socket) await sleep(50);
    }
    const client = new AgentClient(socket);
    for (;;) {
      const reply = await client.request('true', 500).catch(() => undefined);
      if (reply) return client;
      if (performance.now() > deadline) throw new Error('the agent did not answer on its virtio-serial port');
    }
  }

  request(cmd: string, timeoutMs: number): Promise<AgentReply> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`no reply to ${JSON.stringify(cmd)} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, (reply) => {
        clearTimeout(timer);
        resolve(reply);
      });
      this.#socket.write(`${JSON.stringify({ id, cmd })}\n`);
    });
  }

  close(): void {
    this.#socket.destroy();
  }
}

function killChild(child: ChildProcess): void {
  try {
    child.kill('SIGKILL');
  } catch {
    // already gone
  }
}

async function runToEnd(program: string, args: string[]): Promise<void> {
  const child = spawn(program, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr += chunk;
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  if (code !== 0) throw new Error(`${program} failed (${code}): ${stderr}`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
