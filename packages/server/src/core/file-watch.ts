/**
 * Watching a directory in a VM: create, write, remove, rename and chmod events as they happen (E2B's `watchDir`,
 * fsnotify's event names), optionally for the whole tree under it.
 *
 * The watcher is a small Python program run through the agent's exec (Python's standard library, inotify through
 * ctypes: the guest has python3 and nothing else to add), its events one JSON object per line on stdout. Why not a
 * route of the agent: the guest agent is baked into every image and snapshot, so a new route means new images on
 * every node before the feature works; a program sent with the request works with the agents already running, and
 * it runs where the user's programs run (their cgroup, their limits). It ends when the caller stops reading (the
 * exec is aborted, its process group killed), when the directory is removed, or with the VM.
 *
 * inotify is not recursive: with `recursive` the watcher adds a watch per directory, and one for each directory
 * created later (reporting what was already in it as created: files made between the directory's creation and its
 * watch would otherwise be missed). Events are those of the guest's kernel: a rename reports the old path
 * (`rename`) and the new one (`create`), as fsnotify does; repeated identical events in one read are reported once.
 */
import { AppError } from './errors.ts';
import type { GuestAgent } from './vm-engine.ts';

/** How long the watcher may take to put its watch in place (Python's start-up in a busy guest is a second or two). */
const START_TIMEOUT_MS = 30_000;

/** One change under the watched directory. */
export interface WatchEvent {
  type: 'create' | 'write' | 'remove' | 'rename' | 'chmod';
  /** Absolute path in the VM. */
  path: string;
  isDir: boolean;
}

/** What the watch reports besides changes. */
export type WatchNotice =
  | { type: 'overflow' }
  | { type: 'error'; message: string }
  /** The watched directory itself was removed or moved away: nothing more will come. */
  | { type: 'gone' };

/** The change types the watcher reports; any other line is not one of its events. */
const CHANGE_TYPES = new Set<WatchEvent['type']>(['create', 'write', 'remove', 'rename', 'chmod']);
/** A watcher line longer than this is dropped (a path is at most 4096 bytes). */
const MAX_LINE_CHARS = 64 * 1024;
/** Events held for a reader slower than the guest's changes; beyond, one `overflow` stands for what was dropped. */
const MAX_QUEUED = 10_000;

const WATCHER = String.raw`
import ctypes, ctypes.util, errno, json, os, struct, sys

root, recursive = sys.argv[1], sys.argv[2] == "1"
libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
IN_MODIFY, IN_ATTRIB, IN_MOVED_FROM, IN_MOVED_TO = 0x2, 0x4, 0x40, 0x80
IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_MOVE_SELF = 0x100, 0x200, 0x400, 0x800
IN_Q_OVERFLOW, IN_IGNORED, IN_ONLYDIR, IN_DONT_FOLLOW, IN_ISDIR = 0x4000, 0x8000, 0x1000000, 0x2000000, 0x40000000
MASK = IN_MODIFY | IN_ATTRIB | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF
KINDS = ((IN_CREATE, "create"), (IN_MOVED_TO, "create"), (IN_MODIFY, "write"), (IN_DELETE, "remove"),
         (IN_MOVED_FROM, "rename"), (IN_ATTRIB, "chmod"))
out = sys.stdout

def emit(event):
    out.write(json.dumps(event) + "\n")

fd = libc.inotify_init1(os.O_CLOEXEC)
if fd < 0:
    sys.exit("inotify_init1: " + os.strerror(ctypes.get_errno()))
watches = {}
full = False

def add(path):
    global full
    wd = libc.inotify_add_watch(fd, os.fsencode(path), MASK | IN_ONLYDIR | IN_DONT_FOLLOW)
    if wd >= 0:
        watches[wd] = path
        return True
    code = ctypes.get_errno()
    if code == errno.ENOSPC and not full:
        full = True
        emit({"type": "error", "message": "the guest's inotify watch limit is reached (fs.inotify.max_user_watches): "
              "directories beyond it are not watched"})
    return False

def add_tree(path, report):
    if not add(path) or not recursive:
        return
    try:
        entries = list(os.scandir(path))
    except OSError:
        return
    for entry in entries:
        is_dir = entry.is_dir(follow_symlinks=False)
        if report:
            emit({"type": "create", "path": entry.path, "is_dir": is_dir})
        if is_dir:
            add_tree(entry.path, report)

if not add(root):
    sys.exit("cannot watch " + root + ": " + os.strerror(ctypes.get_errno()))
if recursive:
    for entry in os.scandir(root):
        if entry.is_dir(follow_symlinks=False):
            add_tree(entry.path, False)
emit({"type": "ready", "watches": len(watches)})
out.flush()
header = struct.Struct("iIII")
while True:
    data = os.read(fd, 65536)
    seen, offset = [], 0
    while offset < len(data):
        wd, mask, cookie, length = header.unpack_from(data, offset)
        name = data[offset + header.size: offset + header.size + length].split(b"\0", 1)[0]
        offset += header.size + length
        if mask & IN_Q_OVERFLOW:
            emit({"type": "overflow"})
            continue
        if mask & IN_IGNORED:
            watches.pop(wd, None)
            continue
        base = watches.get(wd)
        if base is None:
            continue
        if mask & (IN_DELETE_SELF | IN_MOVE_SELF):
            if base == root:
                emit({"type": "gone"})
                out.flush()
                sys.exit(0)
            continue
        path = os.path.join(base, os.fsdecode(name)) if name else base
        is_dir = bool(mask & IN_ISDIR)
        for bit, kind in KINDS:
            if mask & bit:
                event = (kind, path, is_dir)
                if event not in seen:
                    seen.append(event)
                    emit({"type": kind, "path": path, "is_dir": is_dir})
        if recursive and is_dir and mask & (IN_CREATE | IN_MOVED_TO):
            add_tree(path, True)
    out.flush()
`;

/**
 * Watches `directory` (absolute, already checked to be a directory) through `agent`; resolves once the watch is
 * in place (every change after that is reported) with the stream of what happens under it. The stream ends when
 * `signal` aborts (the watcher is killed), when the directory goes (a `gone` notice last), or when the watcher ends
 * (the VM ended: the error is thrown to the reader).
 */
export async function watchDirectory(
  agent: GuestAgent,
  directory: string,
  options: { recursive: boolean; signal: AbortSignal },
): Promise<AsyncIterable<WatchEvent | WatchNotice>> {
  const queue: Array<WatchEvent | WatchNotice> = [];
  let wake: (() => void) | null = null;
  let ended = false;
  let failure: Error | null = null;
  let ready: (() => void) | null = null;
  let notReady: ((error: Error) => void) | null = null;
  const inPlace = new Promise<void>((resolve, reject) => {
    ready = resolve;
    notReady = reject;
  });
  let pending = '';
  let stderr = '';
  let dropped = false;
  // What the watcher prints is the guest's to choose (a user may replace python3 in their VM): a line that is not
  // one of its events is skipped, a line or a backlog past its bound is dropped, and nothing of it can throw here.
  const push = (item: WatchEvent | WatchNotice) => {
    if (queue.length < MAX_QUEUED) {
      queue.push(item);
      dropped = false;
    } else if (!dropped) {
      dropped = true;
      queue.push({ type: 'overflow' });
    }
  };
  const onLine = (line: string) => {
    let event: { type?: unknown; path?: unknown; is_dir?: unknown; message?: unknown };
    try {
      event = JSON.parse(line) as typeof event;
    } catch {
      return;
    }
    if (event === null || typeof event !== 'object') return;
    if (event.type === 'ready') ready?.();
    else if (event.type === 'overflow' || event.type === 'gone') push({ type: event.type });
    else if (event.type === 'error') push({ type: 'error', message: String(event.message ?? '') });
    else if (CHANGE_TYPES.has(event.type as WatchEvent['type']) && typeof event.path === 'string')
      push({ type: event.type as WatchEvent['type'], path: event.path, isDir: event.is_dir === true });
    else return;
    wake?.();
  };
  // The watcher is stopped by the caller's signal, or here when it does not start in time.
  const starting = new AbortController();
  const signal = AbortSignal.any([options.signal, starting.signal]);
  const run = agent.exec(
    { argv: ['python3', '-c', WATCHER, directory, options.recursive ? '1' : '0'], cwd: '/' },
    {
      onStdout: (chunk) => {
        pending += chunk.toString('utf8');
        let newline: number;
        while ((newline = pending.indexOf('\n')) >= 0) {
          onLine(pending.slice(0, newline));
          pending = pending.slice(newline + 1);
        }
        if (pending.length > MAX_LINE_CHARS) pending = '';
      },
      onStderr: (chunk) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)),
    },
    signal,
  );
  run
    .then(
      (result) => {
        if (!options.signal.aborted && result.exitCode !== 0)
          failure = new Error(`the watcher ended with ${result.exitCode ?? result.signal}: ${stderr.trim().split('\n').at(-1) ?? ''}`);
      },
      (error: unknown) => {
        if (!options.signal.aborted) failure = error instanceof Error ? error : new Error(String(error));
      },
    )
    .finally(() => {
      ended = true;
      notReady?.(failure ?? new Error(`the watcher ended before its watch was in place: ${stderr.trim()}`));
      wake?.();
    });
  options.signal.addEventListener('abort', () => wake?.(), { once: true });
  // A watcher that never says it is ready must not hold the request (and its caller) forever.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      starting.abort();
      reject(new AppError('VM_UNAVAILABLE', `the file watcher did not start in the VM within ${START_TIMEOUT_MS / 1000} s: ${stderr.trim() || 'no output'}`));
    }, START_TIMEOUT_MS);
  });
  try {
    await Promise.race([inPlace, late]);
  } finally {
    clearTimeout(timer);
  }
  return {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length > 0) {
          const next = queue.shift()!;
          yield next;
          if (next.type === 'gone') return;
        }
        if (ended || options.signal.aborted) {
          if (failure) throw failure;
          return;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
    },
  };
}
