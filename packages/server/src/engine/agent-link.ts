/**
 * The host's link to one live VM's agent, kept up for as long as the VM lives. The link can drop while QEMU
 * and the agent live on: a request the agent's HTTP/2 server refuses as a protocol error (e.g. an oversized
 * header) ends the whole HTTP/2 session, and a broken channel does the same. The agent then waits for a new
 * host and accepts it after link sync (packages/agent README, "Link sync"), with its interpreters, terminals
 * and files untouched; so the link reconnects instead of the VM being given up. Operations that find the
 * link down wait for the reconnection. A link that cannot be restored within `reconnectTimeoutMs` is lost:
 * `onLost` fires once, and the engine kills the VM and records why.
 */
import { AgentClient, AgentUnavailableError } from '../agent/index.ts';

export interface AgentLinkOptions {
  /** QEMU's chardev socket of the agent channel. */
  socketPath: string;
  /** The VM's transfer area, for the reconnected client's large files. */
  transferDir: string | null;
  /** How long a dropped link may take to come back, all attempts together. */
  reconnectTimeoutMs: number;
  /** The link dropped (the engine reports it; nothing is decided yet). */
  onDropped(error: Error | undefined): void;
  onReconnected(attempts: number, ms: number): void;
  /** The link could not be restored in time; called once, never after close(). */
  onLost(error: Error): void;
}

/** Pause between two reconnection attempts that failed fast (the socket refused, the channel closed). */
const RETRY_PAUSE_MS = 250;

export class AgentLink {
  private client: AgentClient;
  private reconnecting: Promise<AgentClient> | undefined;
  private lostError: Error | undefined;
  private closed = false;

  constructor(
    client: AgentClient,
    private readonly options: AgentLinkOptions,
  ) {
    this.client = client;
    this.watch(client);
  }

  /** The latest client (connected or not): for callers that only read its state. */
  get current(): AgentClient {
    return this.client;
  }

  /**
   * The connected client: at once, or once a reconnection under way (or started now) succeeds. Rejects with
   * `AgentUnavailableError` when the link is lost or closed.
   */
  async connected(): Promise<AgentClient> {
    if (this.client.connected) return this.client;
    return this.reconnect();
  }

  /** Closes the link for good (the VM is being killed): no reconnection, no `onLost`. */
  async close(): Promise<void> {
    this.closed = true;
    await this.client.close().catch(() => {});
  }

  private watch(client: AgentClient): void {
    client.once('close', (error) => {
      if (this.closed || client !== this.client) return;
      this.options.onDropped(error);
      // At once, not on the next request: a link that cannot come back must end its VM even if nobody calls.
      this.reconnect().catch(() => {});
    });
  }

  private reconnect(): Promise<AgentClient> {
    if (this.closed) return Promise.reject(new AgentUnavailableError('the VM is being killed'));
    if (this.lostError) return Promise.reject(this.lostError);
    this.reconnecting ??= this.reconnectWithin(this.options.reconnectTimeoutMs).finally(() => {
      this.reconnecting = undefined;
    });
    return this.reconnecting;
  }

  private async reconnectWithin(timeoutMs: number): Promise<AgentClient> {
    const started = Date.now();
    const deadline = started + timeoutMs;
    // The old session must let go of the channel first: QEMU's chardev serves one connection at a time.
    await this.client.close().catch(() => {});
    let attempts = 0;
    let lastError: Error | undefined;
    while (!this.closed && Date.now() < deadline) {
      attempts += 1;
      try {
        const client = await AgentClient.connect(
          { socketPath: this.options.socketPath },
          { timeoutMs: Math.max(1, deadline - Date.now()), transferDir: this.options.transferDir },
        );
        if (this.closed) {
          await client.close().catch(() => {});
          break;
        }
        this.client = client;
        this.watch(client);
        this.options.onReconnected(attempts, Date.now() - started);
        return client;
      } catch (error) {
        lastError = error as Error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(RETRY_PAUSE_MS, Math.max(0, deadline - Date.now()))));
      }
    }
    if (this.closed) throw new AgentUnavailableError('the VM is being killed');
    this.lostError = new AgentUnavailableError(
      `the link to the VM's agent dropped and could not be restored within ${Math.round(timeoutMs / 1000)} s${lastError ? `: ${lastError.message}` : ''}`,
      { cause: lastError },
    );
    this.options.onLost(this.lostError);
    throw this.lostError;
  }
}
