/**
 * A {@link ByteLink} over a virtio-serial port (`/dev/vportNpM`), the agent's channel to the host in a VM.
 *
 * Port semantics this handles (see docs of the virtio_console driver and `microvm-lab.md` §3):
 * - the port can be opened only once (EBUSY otherwise): one `r+` fd serves reads and writes;
 * - without a host connected, reads return 0 at once and writes block (or are lost); when a host connects,
 *   reads return data again: EOF is a hangup, not the end. Reads run in a worker thread (`port-reader-source.ts`);
 * - a read returns at most one 4 KiB port buffer; a write may be short (continued until complete).
 */
import { close as closeFd, open, write as writeFd } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { ByteLink, ByteLinkEvents } from './byte-link.ts';
import { PORT_READER_SOURCE } from './port-reader-source.ts';

/** Tuning of a {@link VirtioPortLink}. */
export interface VirtioPortLinkOptions {
  /** Size of the read buffer; the port returns at most 4 KiB per read, other fds may return more. */
  readBufferBytes?: number;
  /** First pause between polls while no host is connected; doubles up to `pollMaxMs`. */
  pollMinMs?: number;
  /**
   * Longest pause between polls while no host is connected. Bounds how long a freshly connected host (e.g.
   * right after a snapshot restore) waits for its first bytes to be read.
   */
  pollMaxMs?: number;
  /**
   * How long a host must stay away before a 0-byte read counts as a hangup (see `port-reader-source.ts`): a
   * reconnect can look like one for an instant. Default 100 ms.
   */
  hangupConfirmMs?: number;
  /** Queued writes are coalesced into one system call up to this size (fewer thread-pool round trips). */
  maxWriteBatchBytes?: number;
}

type ReaderMessage = { type: 'data'; chunk: Uint8Array } | { type: 'hangup' } | { type: 'error'; code?: string; message: string };

const PAUSED = 0;
const STOPPED = 1;

/** The virtio-serial port link. */
export class VirtioPortLink implements ByteLink {
  private readonly control = new Int32Array(new SharedArrayBuffer(8));
  private readonly options: Required<VirtioPortLinkOptions>;
  private queue: Buffer[] = [];
  private writing = false;
  private worker: Worker | undefined;
  private events: ByteLinkEvents | undefined;
  private finished = false;

  /**
   * Opens a port device once, read-write. Retries EBUSY for up to `busyRetryMs` (a previous agent process may
   * still be exiting).
   */
  static async open(devicePath: string, options: VirtioPortLinkOptions = {}, busyRetryMs = 5000): Promise<VirtioPortLink> {
    const deadline = Date.now() + busyRetryMs;
    for (;;) {
      try {
        const fd = await new Promise<number>((resolve, reject) => open(devicePath, 'r+', (error, opened) => (error ? reject(error) : resolve(opened))));
        return new VirtioPortLink(fd, fd, devicePath, options);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EBUSY' || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /**
   * Uses already open fds. A port uses one fd for both; tests pass two FIFOs, whose read end behaves like a port
   * (0 while no writer is open, data again when one opens).
   */
  constructor(
    private readonly readFd: number,
    private readonly writeFd: number,
    readonly description: string,
    options: VirtioPortLinkOptions = {},
  ) {
    this.options = {
      readBufferBytes: options.readBufferBytes ?? 256 * 1024,
      pollMinMs: options.pollMinMs ?? 1,
      pollMaxMs: options.pollMaxMs ?? 20,
      hangupConfirmMs: options.hangupConfirmMs ?? 100,
      maxWriteBatchBytes: options.maxWriteBatchBytes ?? 256 * 1024,
    };
  }

  start(events: ByteLinkEvents): void {
    this.events = events;
    const worker = new Worker(PORT_READER_SOURCE, {
      eval: true,
      workerData: {
        fd: this.readFd,
        bufferBytes: this.options.readBufferBytes,
        pollMinMs: this.options.pollMinMs,
        pollMaxMs: this.options.pollMaxMs,
        hangupConfirmMs: this.options.hangupConfirmMs,
        control: this.control.buffer,
      },
    });
    // A worker blocked in read() must not keep the process alive once the agent wants to exit.
    worker.unref();
    worker.on('message', (message: ReaderMessage) => {
      if (this.finished) return;
      if (message.type === 'data') {
        events.data(Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength));
      } else if (message.type === 'hangup') {
        events.hangup();
      } else {
        this.finish(new Error(`reading ${this.description} failed: ${message.code ?? ''} ${message.message}`.trim()));
      }
    });
    worker.on('error', (error) => this.finish(error));
    this.worker = worker;
  }

  write(chunk: Buffer): void {
    if (this.finished) return;
    this.queue.push(chunk);
    void this.pump();
  }

  discardPendingWrites(): void {
    this.queue = [];
  }

  pause(): void {
    Atomics.store(this.control, PAUSED, 1);
  }

  resume(): void {
    if (Atomics.exchange(this.control, PAUSED, 0) === 1) Atomics.notify(this.control, PAUSED);
  }

  close(): void {
    this.finish();
  }

  private finish(error?: Error): void {
    if (this.finished) return;
    this.finished = true;
    Atomics.store(this.control, STOPPED, 1);
    Atomics.store(this.control, PAUSED, 0);
    Atomics.notify(this.control, PAUSED);
    // terminate() cannot interrupt a read() in progress; the unref'd thread simply dies with the process.
    void this.worker?.terminate();
    this.discardPendingWrites();
    closeFd(this.readFd, () => undefined);
    if (this.writeFd !== this.readFd) closeFd(this.writeFd, () => undefined);
    this.events?.closed(error);
  }

  private async pump(): Promise<void> {
    if (this.writing) return;
    this.writing = true;
    try {
      while (this.queue.length > 0 && !this.finished) {
        const batch = this.takeBatch();
        const bytes = batch.length === 1 ? (batch[0] as Buffer) : Buffer.concat(batch);
        try {
          await this.writeAll(bytes);
        } catch (error) {
          this.finish(new Error(`writing ${this.description} failed: ${(error as Error).message}`));
          return;
        }
      }
    } finally {
      this.writing = false;
    }
  }

  private takeBatch(): Buffer[] {
    const batch: Buffer[] = [];
    let bytes = 0;
    while (this.queue.length > 0) {
      const next = this.queue[0] as Buffer;
      if (batch.length > 0 && bytes + next.length > this.options.maxWriteBatchBytes) break;
      batch.push(next);
      bytes += next.length;
      this.queue.shift();
    }
    return batch;
  }

  /** Writes everything, continuing short writes. */
  private async writeAll(bytes: Buffer): Promise<void> {
    let offset = 0;
    while (offset < bytes.length) {
      offset += await new Promise<number>((resolve, reject) =>
        writeFd(this.writeFd, bytes, offset, bytes.length - offset, null, (error, written) => (error ? reject(error) : resolve(written))),
      );
    }
  }
}
