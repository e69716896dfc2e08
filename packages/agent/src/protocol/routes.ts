/**
 * HTTP/2 routes the agent serves. Every route lives under `/v1` (the protocol major). Request and response
 * bodies are JSON unless the route says otherwise; the shapes are in `messages.ts`.
 */
export const ROUTES = {
  /** `GET` → {@link HelloResponse}. The handshake: protocol version, agent version, identity. */
  hello: '/v1/hello',
  /** `GET` → {@link PingResponse}. Liveness through the agent's event loop. */
  ping: '/v1/ping',
  /**
   * `POST`, full duplex, framed both ways (`frames.ts`): the request body starts with a `Request` frame
   * ({@link ExecRequest}) followed by `Stdin`/`StdinEnd`/`Signal` frames; the response body carries
   * `Started`, `Stdout`, `Stderr` and finally `Exit` (or `Error`).
   */
  exec: '/v1/exec',
  /**
   * (1.8) `POST`, full duplex, framed both ways like `exec`: the request body starts with a `Request` frame
   * ({@link ExecAttachRequest}) naming a kept exec (`keep: true`); the answer's `Started` frame carries the
   * offsets its replay starts at, then the kept output from there, live output, and `Exit`. `Stdin`, `StdinEnd`
   * and `Signal` frames apply as in exec. One stream at a time: a new attach ends the previous one. Unknown pid:
   * `EXEC_NOT_FOUND`. Once an attached stream delivered the `Exit`, the exec is forgotten.
   */
  execAttach: '/v1/exec/attach',
  /** (1.8) `GET` → {@link KeptExecListResponse}: the kept execs, running or ended and not yet collected. */
  execKept: '/v1/exec/kept',
  /** `POST` {@link PythonRunRequest} → {@link PythonRunResult}. */
  pythonRun: '/v1/python/run',
  /** `POST` {@link PythonResetRequest} → {@link PythonResetResponse}: ends a context's interpreter. */
  pythonReset: '/v1/python/reset',
  /**
   * `PUT ?path=&mode=` with the raw file bytes as body → {@link FileWriteResponse};
   * `GET ?path=` → the raw bytes (`content-length` set, mode in {@link HEADER_FILE_MODE}).
   */
  fileContent: '/v1/files/content',
  /**
   * The transfer share (protocol 1.2, capability `files-transfer`): large files cross as chunk files in the
   * guest's virtio-9p share `sandboxd.transfer`, named by the host (32 lowercase hex digits); these routes move
   * them. `POST` {@link TransferInRequest} → {@link TransferInResponse}: copy an uploaded chunk into the upload's
   * temporary file (created next to the target), delete the chunk, and with `last` put the file in place.
   * `GET /v1/files/content` also accepts `transfer=<chunk>&transferLength=<n>&transferAbove=<n>`: a file larger
   * than `transferAbove` then answers with no body, its first `transferLength` bytes in the chunk, and the
   * {@link HEADER_FILE_SIZE} and {@link HEADER_TRANSFER_BYTES} headers.
   */
  fileTransferIn: '/v1/files/transfer/in',
  /** `POST` {@link TransferAbortRequest} → {@link RemoveResponse}: remove an upload's temporary file. */
  fileTransferAbort: '/v1/files/transfer/abort',
  /** `POST` {@link TransferOutRequest} → {@link TransferOutResponse}: copy a range of a file into a new chunk. */
  fileTransferOut: '/v1/files/transfer/out',
  /** `GET ?path=` → {@link FileListResponse}. */
  fileList: '/v1/files/list',
  /** `GET ?path=` → {@link FileStat}. Symlinks are not followed (`lstat`). */
  fileStat: '/v1/files/stat',
  /** `POST` {@link MkdirRequest} → {@link MkdirResponse}. */
  fileMkdir: '/v1/files/mkdir',
  /** `POST` {@link RemoveRequest} → {@link RemoveResponse}. */
  fileRemove: '/v1/files/remove',
  /** `POST ?path=&gzip=0|1` with a tar stream as body → {@link ExtractResponse}. */
  fileExtract: '/v1/files/extract',
  /** `GET` → {@link UsageResponse}. */
  usage: '/v1/usage',
  /** `POST` {@link RestoreRequest} → {@link RestoreResponse}. After every snapshot restore. */
  restore: '/v1/restore',
  /**
   * `POST` → {@link SnapshotPrepareResponse}. After answering, the agent ends this HTTP/2 session and waits for
   * a new host (a link-sync hello), so a VM restored from a snapshot taken now accepts a connection at once.
   */
  snapshotPrepare: '/v1/snapshot/prepare',
  /** (1.5) `POST` {@link QuiesceRequest} → {@link QuiesceResponse}: ready for a live capture (capability `snapshot-quiesce`). */
  snapshotQuiesce: '/v1/snapshot/quiesce',
  /** (1.5) `POST` → `{thawed: true}`: transfers held back by a quiesce go on. */
  snapshotThaw: '/v1/snapshot/thaw',
  /** `POST` {@link PtyCreateRequest} → {@link PtyInfo}; `GET` → {@link PtyListResponse}. */
  pty: '/v1/pty',
  /** `GET ?id=` → {@link PtyInfo}. */
  ptyInfo: '/v1/pty/info',
  /** `POST` {@link TerminalResize} plus `id` → {@link PtyInfo}. */
  ptyResize: '/v1/pty/resize',
  /**
   * `POST` {@link PtyKillRequest} → {@link PtyInfo} (its final state): SIGHUP to the terminal's process group,
   * SIGKILL two seconds later; the terminal is then forgotten.
   */
  ptyKill: '/v1/pty/kill',
  /**
   * `POST ?id=`, full duplex, framed both ways: the request body carries `Stdin` (raw input) and `Resize`
   * frames; the answer carries the scrollback and then live output as `Stdout` frames, and `Exit`
   * ({@link PtyExit}) when the program ended. Closing the stream detaches; the terminal keeps running.
   */
  ptyAttach: '/v1/pty/attach',
} as const;

/**
 * (1.3) How long the agent lets an operation take before its answer starts (headers sent); past that it answers
 * `DEADLINE_EXCEEDED` at once, even while the work itself stays stuck in the guest (a file-system call that never
 * returns). Shorter than the host's own defaults (15 s for control calls), so the caller gets a clear error first.
 *
 * - `control`: hello, ping, usage, stat, list, mkdir, remove, transfer abort, Python reset, restore, the PTY JSON
 *   routes; exec, PTY attach and tunnels until their stream is accepted.
 * - `fileRead`: `GET /v1/files/content` until the bytes start (or the first chunk is in the share).
 * - `transferChunk`: `files/transfer/in` and `files/transfer/out` (one chunk of up to 8 MiB).
 * - No limit of the agent's: Python runs (their own `timeoutMs`), streamed uploads and tar extraction (they answer
 *   after the whole body; the host bounds them) and snapshot preparation (it waits for start-ups of its own).
 */
export const ANSWER_WITHIN_MS = {
  control: 10_000,
  fileRead: 30_000,
  transferChunk: 120_000,
} as const;

/**
 * TCP tunnels are HTTP/2 `CONNECT` requests (no `:path`) whose `:authority` is `<host>:<port>`; the host must
 * be a loopback address ({@link TUNNEL_HOST} by default). 200 means connected; then the stream carries the
 * TCP bytes both ways. A port nobody listens on answers 502 with code `PORT_UNREACHABLE`.
 */
export const TUNNEL_HOST = '127.0.0.1';

/** Response header of `GET /v1/files/content`: the file's permission bits in octal (e.g. `644`). */
export const HEADER_FILE_MODE = 'sandboxd-file-mode';

/** Response header of a transferred `GET /v1/files/content`: the file's size in bytes. */
export const HEADER_FILE_SIZE = 'sandboxd-file-size';

/** Response header of a transferred `GET /v1/files/content`: how many bytes the first chunk holds. */
export const HEADER_TRANSFER_BYTES = 'sandboxd-transfer-bytes';

/** The 9p mount tag of the transfer share (the host's QEMU command line exports it under this tag). */
export const TRANSFER_MOUNT_TAG = 'sandboxd.transfer';

/**
 * (1.6) The virtio-blk serial of volume slot `n` is this prefix followed by `n` (`sandboxd-vol0`…): the guest finds a
 * slot's block device by it (the `serial` file of its disk in `/sys/block`), never by its probe order.
 */
export const VOLUME_SERIAL_PREFIX = 'sandboxd-vol';

/** Chunk names and upload ids on the transfer share: 32 lowercase hex digits. */
export const TRANSFER_NAME_PATTERN = /^[0-9a-f]{32}$/;

/** Response header naming the agent's error code on non-2xx answers whose body may not be JSON (tunnels). */
export const HEADER_ERROR_CODE = 'sandboxd-error-code';
