/**
 * The in-sandbox daemon's `filesystem.Filesystem` service over sandboxd's files (core/files.ts, the one path into
 * the guest). Paths are the calling account's (a relative one is its home's, entry-info.ts); directories made here
 * are that account's own. Errors are envd's: a missing path is NotFound (the SDK's `exists` relies on it), a path
 * the call cannot take InvalidArgument, a directory that is already there AlreadyExists (`makeDir` answers false).
 */
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import type { FileStat } from '@sandboxd/agent/protocol';
import type { Services } from '../../../services.ts';
import { toConnectError } from '../errors.ts';
import { callerOf, keepaliveMsOf, streamSignal, userOf } from './caller.ts';
import { absolutePathFor, entryInfoOf } from './entry-info.ts';
import type { Filesystem } from './gen/filesystem/filesystem_pb.ts';
import { WatchDirResponseSchema, type EntryInfo, type WatchDirResponse } from './gen/filesystem/filesystem_pb.ts';
import { withKeepalive } from './keepalive.ts';
import { filesystemEventsOf, PolledWatchers } from './watchers.ts';

type FilesystemImpl = ServiceImpl<typeof Filesystem>;

/** Entries one ListDir answers at most (a deep listing of a large tree is refused rather than held whole). */
const MAX_LISTED = 100_000;
/** ListDir's deepest depth: deeper than any useful listing, bounded so one request cannot walk forever. */
const MAX_DEPTH = 64;

const KEEPALIVE = () => create(WatchDirResponseSchema, { event: { case: 'keepalive', value: {} } });

/** The handler's result, with any error as the Connect error the SDK maps. */
async function connectErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw toConnectError(error);
  }
}

function requirePath(given: string, field = 'path'): string {
  if (given.includes('\0')) throw new ConnectError(`${field} contains a NUL byte`, Code.InvalidArgument);
  return given;
}

export function filesystemService(services: Services): Partial<FilesystemImpl> {
  const files = services.sandbox.files;
  const watchers = new PolledWatchers(services);

  /** The caller, its account and `given` as an absolute path of that account's. */
  function scope(context: HandlerContext, given: string, field?: string) {
    const { principal, session } = callerOf(context);
    const user = userOf(context);
    return { principal, sessionId: session.id, user, target: absolutePathFor(requirePath(given, field), user) };
  }

  /** envd's entries of stat results, with their owners (one guest call for them all). */
  async function entriesOf(context: HandlerContext, stats: FileStat[]): Promise<EntryInfo[]> {
    if (stats.length === 0) return [];
    const { principal, session } = callerOf(context);
    const owners = await files.owners(
      principal,
      session.id,
      stats.map((stat) => stat.path),
    );
    return stats.map((stat) => entryInfoOf(stat, owners.get(stat.path)));
  }

  return {
    async stat(request, context) {
      return connectErrors(async () => {
        const { principal, sessionId, target } = scope(context, request.path);
        const [entry] = await entriesOf(context, [await files.stat(principal, sessionId, target)]);
        return { entry };
      });
    },

    async listDir(request, context) {
      return connectErrors(async () => {
        const { principal, sessionId, target } = scope(context, request.path);
        const depth = request.depth === 0 ? 1 : request.depth;
        if (depth > MAX_DEPTH) throw new ConnectError(`depth must be at most ${MAX_DEPTH}`, Code.InvalidArgument);
        const stat = await files.stat(principal, sessionId, target);
        if (stat.type !== 'directory') throw new ConnectError(`${target} is not a directory`, Code.InvalidArgument);
        const listed = await files.list(principal, sessionId, target, { depth, limit: MAX_LISTED });
        if (listed.truncated)
          throw new ConnectError(`${target} holds more than ${MAX_LISTED} entries to depth ${depth}: list a smaller depth`, Code.ResourceExhausted);
        return { entries: await entriesOf(context, listed.entries) };
      });
    },

    async makeDir(request, context) {
      return connectErrors(async () => {
        const { principal, sessionId, user, target } = scope(context, request.path);
        const made = await files.mkdir(principal, sessionId, target, true, user);
        if (!made.created) throw new ConnectError(`directory ${made.path} already exists`, Code.AlreadyExists);
        const [entry] = await entriesOf(context, [await files.stat(principal, sessionId, made.path)]);
        return { entry };
      });
    },

    async move(request, context) {
      return connectErrors(async () => {
        const { principal, sessionId, user, target: from } = scope(context, request.source, 'source');
        const to = absolutePathFor(requirePath(request.destination, 'destination'), user);
        // As envd's rename: what is at the destination is replaced (a file by anything, a directory only when empty).
        const moved = await files.rename(principal, sessionId, { from, to, overwrite: true });
        const [entry] = await entriesOf(context, [moved]);
        return { entry };
      });
    },

    async remove(request, context) {
      return connectErrors(async () => {
        const { principal, sessionId, target } = scope(context, request.path);
        // As envd's: the whole tree, and nothing there is no error.
        await files.remove(principal, sessionId, target, true);
        return {};
      });
    },

    async *watchDir(request, context) {
      const { principal, sessionId, target } = scope(context, request.path);
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      const signal = streamSignal(context);
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        const watch = await connectErrors(() => files.watch(principal, sessionId, target, { recursive: request.recursive, signal: stop.signal }));
        yield create(WatchDirResponseSchema, { event: { case: 'start', value: {} } });
        const events = async function* (): AsyncGenerator<WatchDirResponse> {
          for await (const event of filesystemEventsOf(watch.path, watch.events))
            yield create(WatchDirResponseSchema, { event: { case: 'filesystem', value: event } });
        };
        try {
          yield* withKeepalive(events(), keepaliveMsOf(context), KEEPALIVE);
        } catch (error) {
          throw toConnectError(error);
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
        // The reader left or the watch ended: the watcher in the VM goes with it.
        stop.abort();
      }
    },

    async createWatcher(request, context) {
      return connectErrors(async () => {
        const { principal, sessionId, target } = scope(context, request.path);
        return { watcherId: await watchers.create(principal, sessionId, target, request.recursive) };
      });
    },

    async getWatcherEvents(request, context) {
      const { session } = callerOf(context);
      return { events: watchers.take(session.id, request.watcherId) };
    },

    async removeWatcher(request, context) {
      const { session } = callerOf(context);
      watchers.remove(session.id, request.watcherId);
      return {};
    },
  };
}
