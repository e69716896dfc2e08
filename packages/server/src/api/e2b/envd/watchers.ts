/**
 * Directory watches as envd reports them, over sandboxd's (core/file-watch.ts through FileService.watch): events
 * named relative to the watched directory, and the polled watchers of `CreateWatcher`/`GetWatcherEvents`/
 * `RemoveWatcher` for clients that cannot hold a stream open (E2B's synchronous Python SDK).
 *
 * Polled watchers live in this node's memory, per sandbox: at most {@link MAX_WATCHERS_PER_SANDBOX} at once (each
 * holds one of the session's watches, which the core bounds too), each buffering at most {@link MAX_BUFFERED}
 * events (the oldest are dropped past that: a poller that falls behind loses the oldest, as inotify's own queue
 * would), and one not polled for {@link IDLE_MS} is removed. A watcher whose watch ended (the directory went, the
 * sandbox stopped) answers its last events once and is then gone (NotFound).
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path/posix';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Principal } from '../../../core/authenticator.ts';
import type { WatchEvent, WatchNotice } from '../../../core/file-watch.ts';
import type { Services } from '../../../services.ts';
import { EventType, FilesystemEventSchema, type FilesystemEvent } from './gen/filesystem/filesystem_pb.ts';

export const MAX_WATCHERS_PER_SANDBOX = 8;
export const MAX_BUFFERED = 10_000;
export const IDLE_MS = 10 * 60_000;

const EVENT_TYPES: Record<WatchEvent['type'], EventType> = {
  create: EventType.CREATE,
  write: EventType.WRITE,
  remove: EventType.REMOVE,
  rename: EventType.RENAME,
  chmod: EventType.CHMOD,
};

/**
 * The envd events of a core watch of `root`: changes named relative to it; the end of the watch (its directory
 * gone) ends the stream; the core's overflow and error notices have no envd event and are skipped.
 */
export async function* filesystemEventsOf(root: string, source: AsyncIterable<WatchEvent | WatchNotice>): AsyncGenerator<FilesystemEvent> {
  for await (const item of source) {
    if (item.type === 'gone') return;
    if (item.type === 'overflow' || item.type === 'error') continue;
    yield create(FilesystemEventSchema, { name: path.relative(root, item.path), type: EVENT_TYPES[item.type] });
  }
}

interface Watcher {
  sandboxId: string;
  stop: AbortController;
  events: FilesystemEvent[];
  ended: boolean;
  idle: NodeJS.Timeout;
}

/** The polled watchers of this node's sandboxes. */
export class PolledWatchers {
  private readonly watchers = new Map<string, Watcher>();

  constructor(private readonly services: Services) {}

  /** Starts watching `directory` (absolute) in the sandbox; resolves with the watcher's id once the watch is in place. */
  async create(principal: Principal, sandboxId: string, directory: string, recursive: boolean): Promise<string> {
    const held = [...this.watchers.values()].filter((watcher) => watcher.sandboxId === sandboxId).length;
    if (held >= MAX_WATCHERS_PER_SANDBOX)
      throw new ConnectError(`the sandbox has ${held} watchers (at most ${MAX_WATCHERS_PER_SANDBOX}): remove one first`, Code.ResourceExhausted);
    const stop = new AbortController();
    const { path: root, events } = await this.services.sandbox.files.watch(principal, sandboxId, directory, { recursive, signal: stop.signal });
    const id = randomUUID();
    const watcher: Watcher = { sandboxId, stop, events: [], ended: false, idle: this.idleTimer(id) };
    this.watchers.set(id, watcher);
    void (async () => {
      try {
        for await (const event of filesystemEventsOf(root, events)) {
          if (watcher.events.length >= MAX_BUFFERED) watcher.events.shift();
          watcher.events.push(event);
        }
      } catch {
        // The watch ended with its sandbox: the poller learns it from the watcher's end.
      }
      watcher.ended = true;
    })();
    return id;
  }

  /** The events since the last poll; the watcher is removed once it ended and its last events were taken. */
  take(sandboxId: string, id: string): FilesystemEvent[] {
    const watcher = this.find(sandboxId, id);
    const events = watcher.events.splice(0);
    if (watcher.ended) this.remove(sandboxId, id);
    else watcher.idle.refresh();
    return events;
  }

  remove(sandboxId: string, id: string): void {
    const watcher = this.find(sandboxId, id);
    clearTimeout(watcher.idle);
    watcher.stop.abort();
    this.watchers.delete(id);
  }

  /** The sandbox's watcher `id`; another sandbox's is not found, as one that never was. */
  private find(sandboxId: string, id: string): Watcher {
    const watcher = this.watchers.get(id);
    if (!watcher || watcher.sandboxId !== sandboxId) throw new ConnectError(`watcher ${id} not found`, Code.NotFound);
    return watcher;
  }

  private idleTimer(id: string): NodeJS.Timeout {
    const timer = setTimeout(() => {
      const watcher = this.watchers.get(id);
      if (watcher) this.remove(watcher.sandboxId, id);
    }, IDLE_MS);
    timer.unref();
    return timer;
  }
}
