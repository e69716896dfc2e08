/**
 * Serves one {@link ByteLink}: link sync (see `protocol/link-sync.ts`), then one HTTP/2 server session at a
 * time, and back to waiting whenever the host goes away, the session ends, or a snapshot is being prepared.
 *
 * States: `waiting-hello` (drop bytes until a host hello; answer it) → `waiting-preface` (drop bytes until the
 * HTTP/2 preface; answer a hello with a new nonce again) → `session` (bytes go to the HTTP/2 session). Any
 * session end returns to `waiting-hello`.
 */
import type { Http2Server, Http2Session, ServerHttp2Session } from 'node:http2';
import { encodeAgentReady, findHostHello, HELLO_BYTES, HTTP2_PREFACE } from '../protocol/link-sync.ts';
import type { ByteLink } from './byte-link.ts';
import { SessionStream } from './session-stream.ts';

/** Why a session ended. */
export type SessionEndReason = 'hangup' | 'session-closed' | 'handover' | 'link-closed';

/** Diagnostics a link server reports (the process decides what to log). */
export type LinkEvent =
  | { type: 'hello'; link: string }
  | { type: 'session-start'; link: string }
  | { type: 'session-end'; link: string; reason: SessionEndReason }
  | { type: 'session-error'; link: string; error: Error }
  | { type: 'link-closed'; link: string; error?: Error };

/** Options of a {@link LinkServer}. */
export interface LinkServerOptions {
  onEvent?: (event: LinkEvent) => void;
  /** After a handover the old session gets this long to flush its last frames before it is destroyed. */
  handoverGraceMs?: number;
}

type State =
  | { kind: 'waiting-hello' }
  | { kind: 'waiting-preface'; nonce: Buffer }
  | { kind: 'session'; nonce: Buffer; session: ServerHttp2Session; stream: SessionStream }
  | { kind: 'closed' };

// Scanning keeps only this many trailing bytes while it finds nothing, so junk cannot grow memory.
const SCAN_TAIL_BYTES = Math.max(HELLO_BYTES, HTTP2_PREFACE.length) - 1;

/** Link sync plus HTTP/2 sessions over one link. */
export class LinkServer {
  private state: State = { kind: 'waiting-hello' };
  private pending: Buffer = Buffer.alloc(0);
  // The stream of the last session that was handed over: it may still flush its last frames until the next
  // host is answered, then it is killed so nothing of it follows the answer.
  private retiring: { stream: SessionStream; session: ServerHttp2Session } | undefined;
  private readonly sessions = new WeakSet<Http2Session>();
  private readonly handoverGraceMs: number;
  private resolveClosed!: () => void;

  /** Resolves when the link is closed for good. */
  readonly closed = new Promise<void>((resolve) => {
    this.resolveClosed = resolve;
  });

  constructor(
    private readonly link: ByteLink,
    private readonly http2Server: Http2Server,
    private readonly options: LinkServerOptions = {},
  ) {
    this.handoverGraceMs = options.handoverGraceMs ?? 2000;
  }

  /** The current state's name, for tests and diagnostics. */
  get stateName(): State['kind'] {
    return this.state.kind;
  }

  /** True when `session` is (or was) one of this link's sessions. */
  owns(session: Http2Session): boolean {
    return this.sessions.has(session);
  }

  /** Starts reading the link. */
  start(): void {
    this.link.start({
      data: (chunk) => this.onData(chunk),
      hangup: () => this.onHangup(),
      closed: (error) => this.onClosed(error),
    });
  }

  /**
   * Ends the current session gracefully (GOAWAY after the last open stream) and waits for a new host on the
   * same link right away. Used by snapshot preparation: a VM restored from the snapshot is then already
   * waiting for a hello, whatever the guest saw of the old host's disconnect.
   */
  handover(): void {
    if (this.state.kind !== 'session') return;
    const { session, stream } = this.state;
    this.endSession('handover');
    this.retire(stream, session);
    session.close();
  }

  /** Closes the link and any session. */
  close(): void {
    this.link.close();
  }

  private onData(chunk: Buffer): void {
    if (this.state.kind === 'session') {
      this.state.stream.deliver(chunk);
      return;
    }
    if (this.state.kind === 'closed') return;
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    this.scan();
  }

  private scan(): void {
    for (;;) {
      const state = this.state;
      if (state.kind === 'waiting-hello') {
        const hello = findHostHello(this.pending);
        if (!hello) {
          this.keepTail();
          return;
        }
        this.pending = this.pending.subarray(hello.end);
        this.answer(hello.nonce);
        this.state = { kind: 'waiting-preface', nonce: hello.nonce };
        continue;
      }
      if (state.kind !== 'waiting-preface') return;
      const preface = this.pending.indexOf(HTTP2_PREFACE);
      const hello = findHostHello(this.pending);
      if (hello && (preface < 0 || hello.start < preface)) {
        this.pending = this.pending.subarray(hello.end);
        // Repeats of the hello we answered are expected; a new nonce is a new host and gets its own answer.
        if (!hello.nonce.equals(state.nonce)) {
          this.answer(hello.nonce);
          this.state = { kind: 'waiting-preface', nonce: hello.nonce };
        }
        continue;
      }
      if (preface >= 0) {
        const initial = this.pending.subarray(preface);
        this.pending = Buffer.alloc(0);
        this.startSession(state.nonce, initial);
        return;
      }
      this.keepTail();
      return;
    }
  }

  private keepTail(): void {
    if (this.pending.length > SCAN_TAIL_BYTES) this.pending = Buffer.from(this.pending.subarray(this.pending.length - SCAN_TAIL_BYTES));
  }

  private answer(nonce: Buffer): void {
    this.killRetiring();
    this.options.onEvent?.({ type: 'hello', link: this.link.description });
    this.link.write(encodeAgentReady(nonce));
  }

  private startSession(nonce: Buffer, initial: Buffer): void {
    let session: ServerHttp2Session | undefined;
    // GOAWAY out means the session is over (see goaway-watch.ts); its last frames may still flush until the
    // next host is answered.
    const stream = new SessionStream(this.link, () => {
      if (this.state.kind !== 'session' || this.state.session !== session) return;
      this.endSession('session-closed');
      this.retire(stream, session);
    });
    const onSession = (created: ServerHttp2Session): void => {
      session = created;
    };
    // connectionListener creates the session and emits 'session' synchronously inside emit('connection').
    this.http2Server.once('session', onSession);
    this.http2Server.emit('connection', stream);
    this.http2Server.off('session', onSession);
    if (!session) {
      stream.kill();
      throw new Error('the HTTP/2 server did not create a session for the link');
    }
    const created = session;
    this.sessions.add(created);
    created.on('error', (error) => this.options.onEvent?.({ type: 'session-error', link: this.link.description, error }));
    created.once('close', () => {
      if (this.state.kind === 'session' && this.state.session === created) this.endSession('session-closed');
      stream.kill();
    });
    this.state = { kind: 'session', nonce, session: created, stream };
    this.options.onEvent?.({ type: 'session-start', link: this.link.description });
    stream.deliver(initial);
  }

  private endSession(reason: SessionEndReason): void {
    if (this.state.kind !== 'session') return;
    this.state = { kind: 'waiting-hello' };
    this.pending = Buffer.alloc(0);
    // The session may have paused the link for backpressure; the scanner must keep reading.
    this.link.resume();
    this.options.onEvent?.({ type: 'session-end', link: this.link.description, reason });
  }

  private retire(stream: SessionStream, session: ServerHttp2Session): void {
    this.killRetiring();
    this.retiring = { stream, session };
    const timer = setTimeout(() => {
      if (this.retiring?.stream === stream) this.killRetiring();
    }, this.handoverGraceMs);
    timer.unref();
  }

  private killRetiring(): void {
    const retiring = this.retiring;
    if (!retiring) return;
    this.retiring = undefined;
    retiring.stream.kill();
    retiring.session.destroy();
  }

  private onHangup(): void {
    if (this.state.kind === 'closed') return;
    if (this.state.kind === 'session') {
      const { session, stream } = this.state;
      this.endSession('hangup');
      stream.kill();
      session.destroy();
    }
    this.killRetiring();
    this.state = { kind: 'waiting-hello' };
    this.pending = Buffer.alloc(0);
    this.link.discardPendingWrites();
  }

  private onClosed(error?: Error): void {
    if (this.state.kind === 'session') {
      const { session, stream } = this.state;
      this.endSession('link-closed');
      stream.kill();
      session.destroy();
    }
    this.killRetiring();
    this.state = { kind: 'closed' };
    this.options.onEvent?.({ type: 'link-closed', link: this.link.description, ...(error ? { error } : {}) });
    this.resolveClosed();
  }
}
