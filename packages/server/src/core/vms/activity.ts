/**
 * What keeps a VM awake (auto-pause, issue 37): every use of its guest agent. Every surface reaches a VM through
 * its agent (executions, files, processes, terminals, previews, SSH, browser and desktop calls, E2B's envd), and
 * every agent handed out by the VM service is wrapped here (`watch`), so activity is recorded in one place, not
 * per route. A call marks the VM used when it starts and when it ends, and holds it busy while it runs (an
 * execution, a file watch, an attached terminal: `attachPty` holds until the attachment closes); a preview tunnel
 * marks it used on every chunk either way. Monitoring (`usage`) is not activity: a dashboard polling a VM must not
 * keep it awake; nor is a background process running (`runsOnItsOwn`).
 *
 * Kept in memory per node (a map write per call) and flushed to the store every few seconds (`flush`): the VM's
 * `last_activity_at` is then what the node that runs it reads when the VM was used through another node, and VMs
 * held busy here are written as used at every flush.
 */
import type { Duplex } from 'node:stream';
import { recordVmActivity } from '../../store/vms-store.ts';
import type { Database } from '../../store/database.ts';
import type { Clock } from '../clock.ts';
import type { GuestAgent, PtyAttachment } from '../vm-engine.ts';

/** Agent calls that only look at a VM: they neither wake it nor keep it awake. */
const NOT_ACTIVITY = new Set<string | symbol>(['usage']);

/**
 * A call that follows a program which runs on its own (a background process of the process API, `keep: true`, or
 * such a process followed again): its start is a use, its running is not (a server that runs in the VM for days
 * must not keep it awake; what a client does with it is).
 */
function runsOnItsOwn(method: string | symbol, args: unknown[]): boolean {
  if (method === 'attachExec') return true;
  return method === 'exec' && typeof args[0] === 'object' && args[0] !== null && (args[0] as { keep?: unknown }).keep === true;
}

export class VmActivity {
  /** The last use seen here, by VM (epoch ms). */
  private readonly lastUse = new Map<string, number>();
  /** Calls (and attachments, tunnels) under way, by VM. */
  private readonly holds = new Map<string, number>();
  /** VMs used since the last flush. */
  private unflushed = new Set<string>();

  constructor(private readonly clock: Clock) {}

  /** Records a use of the VM now. */
  touch(vmId: string): void {
    this.lastUse.set(vmId, this.clock.now().getTime());
    this.unflushed.add(vmId);
  }

  /** Holds the VM busy until the returned release is called (once; later calls do nothing). */
  hold(vmId: string): () => void {
    this.touch(vmId);
    this.holds.set(vmId, (this.holds.get(vmId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.holds.get(vmId) ?? 1) - 1;
      if (left > 0) this.holds.set(vmId, left);
      else this.holds.delete(vmId);
      this.touch(vmId);
    };
  }

  /** Whether something holds the VM busy on this node now. */
  isHeld(vmId: string): boolean {
    return this.holds.has(vmId);
  }

  /** The last use this node saw of the VM (epoch ms), if any. */
  lastUseOf(vmId: string): number | undefined {
    return this.lastUse.get(vmId);
  }

  /** Forgets a VM that ended (its holds, if any, release into nothing). */
  forget(vmId: string): void {
    this.lastUse.delete(vmId);
    this.holds.delete(vmId);
    this.unflushed.delete(vmId);
  }

  /**
   * Forgets the last use of VMs that `keep` does not name (a VM that ended, or runs on another node: its use is in
   * the store once flushed), except those used since the last flush or held busy.
   */
  prune(keep: (vmId: string) => boolean): void {
    for (const vmId of this.lastUse.keys()) if (!keep(vmId) && !this.unflushed.has(vmId) && !this.holds.has(vmId)) this.lastUse.delete(vmId);
  }

  /** Writes the VMs used since the last flush, and those held busy now, as used now (one statement). */
  async flush(database: Database): Promise<void> {
    const ids = new Set([...this.unflushed, ...this.holds.keys()]);
    if (ids.size === 0) return;
    this.unflushed = new Set();
    try {
      await recordVmActivity(database.db, [...ids], this.clock.now().toISOString());
    } catch (error) {
      // Written again at the next flush.
      for (const id of ids) this.unflushed.add(id);
      throw error;
    }
  }

  /** The agent of `vmId`, every call of which records activity (see the file's comment). */
  watch(vmId: string, agent: GuestAgent): GuestAgent {
    return new Proxy(agent, {
      get: (target, property) => {
        // Read and called on the agent itself (never through the proxy): its private fields stay reachable.
        const value: unknown = Reflect.get(target, property);
        if (typeof value !== 'function' || NOT_ACTIVITY.has(property)) return value;
        return (...args: unknown[]) => {
          if (runsOnItsOwn(property, args)) {
            this.touch(vmId);
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          }
          const release = this.hold(vmId);
          let result: unknown;
          try {
            result = (value as (...a: unknown[]) => unknown).apply(target, args);
          } catch (error) {
            release();
            throw error;
          }
          if (!(result instanceof Promise)) {
            release();
            return result;
          }
          return result.then(
            (answer: unknown) => {
              if (property === 'attachPty') return this.heldUntilClosed(vmId, answer as PtyAttachment, release);
              release();
              if (property === 'openTunnel') return this.tunnelWatched(vmId, answer as Duplex);
              return answer;
            },
            (error: unknown) => {
              release();
              throw error;
            },
          );
        };
      },
    });
  }

  /** An attached terminal keeps its VM busy until it closes; what is typed into it counts as use. */
  private heldUntilClosed(vmId: string, attachment: PtyAttachment, release: () => void): PtyAttachment {
    void attachment.closed.then(release, release);
    const write = attachment.write.bind(attachment);
    attachment.write = (data: Buffer) => {
      this.touch(vmId);
      write(data);
    };
    return attachment;
  }

  /**
   * A preview tunnel counts as use whenever bytes cross it, either way (an open keep-alive connection that
   * carries nothing does not keep the VM awake). Its own `write` and `push` are wrapped: listening for `data`
   * would change how the stream flows.
   */
  private tunnelWatched(vmId: string, tunnel: Duplex): Duplex {
    const write = tunnel.write.bind(tunnel) as (...args: unknown[]) => boolean;
    const push = tunnel.push.bind(tunnel);
    tunnel.write = ((...args: unknown[]) => {
      this.touch(vmId);
      return write(...args);
    }) as Duplex['write'];
    tunnel.push = (chunk: unknown, encoding?: BufferEncoding) => {
      if (chunk !== null) this.touch(vmId);
      return push(chunk, encoding);
    };
    return tunnel;
  }
}
