/**
 * Host side of the privileged helper (`helper.py`, which describes its requests): starts it, sends requests, restarts it if it died.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { JsonPipeChannel } from '../python/json-pipe-channel.ts';
import HELPER_SOURCE from './helper.py';

/** What the helper changes in one restore. Absent fields are left alone. */
export interface HelperRestore {
  wallClockMs?: number;
  /** Base64 entropy to credit to the kernel RNG. */
  entropy?: string;
  hostname?: string;
  /** Give the guest a fresh /etc/machine-id, drawn after the entropy was credited. */
  newMachineId?: boolean;
  /** Give the guest a fresh boot id (a file bound over the kernel's, which cannot be written). */
  newBootId?: boolean;
}

/** The helper's answer. */
export interface HelperAnswer {
  /** False in dry-run mode. */
  applied: boolean;
  clockStepMs: number;
}

type Request = { id: number; op: 'restore' | 'entropy' | 'ping' | 'mount-9p' | 'umount'; tag?: string; target?: string } & HelperRestore;
type Answer = { id: number; ok: boolean; applied?: boolean; clockStepMs?: number; error?: string };

/** Options of the helper. */
export interface PrivilegedHelperOptions {
  pythonCommand: string;
  /** Change nothing (tests on a host must not set its clock or hostname). */
  dryRun: boolean;
}

/** A running helper process. */
export class PrivilegedHelper {
  private child: ChildProcess | undefined;
  private channel: JsonPipeChannel<Answer, Request> | undefined;
  private ready: Promise<void> | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>();

  constructor(private readonly options: PrivilegedHelperOptions) {}

  /** Starts the helper (idempotent); resolves once it answered a ping. */
  start(): Promise<void> {
    if (this.ready) return this.ready;
    // -I: the helper is the agent's, not the user's; PYTHON* variables of an image's Env must not reach it.
    const child = spawn(this.options.pythonCommand, ['-I', '-c', HELPER_SOURCE, ...(this.options.dryRun ? ['--dry-run'] : [])], {
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    this.child = child;
    const fail = (reason: string): void => {
      if (this.child !== child) return;
      this.child = undefined;
      this.channel = undefined;
      this.ready = undefined;
      for (const waiter of this.waiting.values()) waiter.reject(new Error(`the privileged helper ${reason}`));
      this.waiting.clear();
    };
    child.once('error', (error) => fail(`could not start: ${error.message}`));
    child.once('exit', (code, signal) => fail(signal ? `was killed by ${signal}` : `exited with status ${code}`));
    this.channel = new JsonPipeChannel<Answer, Request>(
      child.stdout!,
      child.stdin!,
      (answer) => {
        const waiter = this.waiting.get(answer.id);
        this.waiting.delete(answer.id);
        waiter?.resolve(answer);
      },
      () => child.kill('SIGKILL'),
    );
    const ready = this.call({ op: 'ping' }).then(() => undefined);
    this.ready = ready;
    ready.catch(() => undefined);
    return ready;
  }

  /** True once the helper answered. */
  async isReady(waitMs: number): Promise<boolean> {
    const timeout = new Promise<boolean>((resolve) => setTimeout(() => resolve(false), waitMs).unref());
    return Promise.race([
      this.start().then(
        () => true,
        () => false,
      ),
      timeout,
    ]);
  }

  /** Applies the restore fix-ups in one round trip. */
  async restore(request: HelperRestore): Promise<HelperAnswer> {
    await this.start();
    const answer = await this.call({ op: 'restore', ...request });
    return { applied: answer.applied ?? false, clockStepMs: answer.clockStepMs ?? 0 };
  }

  /** Mounts the virtio-9p share `tag` at `target` (created if missing); an existing mount there is kept. */
  async mount9p(tag: string, target: string): Promise<void> {
    await this.start();
    await this.call({ op: 'mount-9p', tag, target });
  }

  /** Unmounts whatever is mounted at `target` (nothing there: no error). */
  async umount(target: string): Promise<void> {
    await this.start();
    await this.call({ op: 'umount', target });
  }

  /** Stops the helper. */
  stop(): void {
    this.child?.kill('SIGKILL');
  }

  private call(request: Omit<Request, 'id'>): Promise<Answer> {
    const channel = this.channel;
    if (!channel) return Promise.reject(new Error('the privileged helper is not running'));
    const id = ++this.nextId;
    return new Promise<Answer>((resolve, reject) => {
      this.waiting.set(id, {
        resolve: (answer) => (answer.ok ? resolve(answer) : reject(new Error(answer.error ?? 'the privileged helper failed'))),
        reject,
      });
      channel.send({ ...request, id } as Request);
    });
  }
}
