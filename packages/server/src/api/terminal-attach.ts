/**
 * Attaching to a terminal: a WebSocket at `/v1/{sessions|vms}/{id}/pty/sessions/{pty_id}/connect`, bridged to
 * the agent's attach stream. Binary frames are terminal bytes both ways; text frames are JSON control
 * messages (`resize` from the client, `exit` from the server). Closing the WebSocket only detaches.
 */
import type { IncomingMessage } from 'node:http';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { Authenticator, CredentialSource, Principal } from '../core/authenticator.ts';
import { AppError } from '../core/errors.ts';
import type { TerminalScope, TerminalService } from '../core/terminals.ts';
import type { PtyAttachment, PtyExit } from '../core/vm-engine.ts';
import type { UpgradeHandler } from './upgrade-router.ts';

const CONNECT_PATH = /^\/v1\/(sessions|vms)\/([^/?]+)\/pty\/sessions\/([^/?]+)\/connect\/?(\?.*)?$/;
/** Largest client frame accepted (a paste); terminals take input a little at a time anyway. */
const MAX_MESSAGE_BYTES = 1024 * 1024;

interface AttachClaim {
  scope: TerminalScope;
  ptyId: string;
  token: string | null;
}

/** The API key or bearer token a WebSocket handshake carries in its headers, if any. */
export function credentialOf(request: IncomingMessage): { value: string; source: CredentialSource } | null {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey.trim() !== '') return { value: apiKey.trim(), source: 'x-api-key' };
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  return bearer ? { value: bearer, source: 'bearer' } : null;
}

/** Parses a client's text frame; null for anything that is not a known control message. */
function controlMessage(text: string): { type: 'resize'; cols: number; rows: number } | { type: 'input'; data: string } | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!value || typeof value !== 'object') return null;
  const message = value as Record<string, unknown>;
  const dimension = (n: unknown) => Number.isInteger(n) && (n as number) >= 1 && (n as number) <= 1000;
  if (message.type === 'resize' && dimension(message.cols) && dimension(message.rows))
    return { type: 'resize', cols: message.cols as number, rows: message.rows as number };
  if (message.type === 'input' && typeof message.data === 'string') return { type: 'input', data: message.data };
  return null;
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

/**
 * Relays one agent attachment and one WebSocket until either ends. The attachment comes first (so a missing
 * terminal is still an HTTP error), which means output can arrive before the WebSocket handshake is done:
 * it is held until then.
 */
class TerminalBridge {
  private socket: WebSocket | null = null;
  private held: Buffer[] = [];
  private exit: PtyExit | null = null;

  readonly handlers = {
    onOutput: (chunk: Buffer): void => {
      if (this.socket) {
        if (this.socket.readyState === this.socket.OPEN) this.socket.send(chunk, { binary: true });
      } else {
        this.held.push(chunk);
      }
    },
    onExit: (exit: PtyExit): void => {
      this.exit = exit;
      if (this.socket) this.sendExit(this.socket, exit);
    },
  };

  connect(socket: WebSocket, attachment: PtyAttachment): void {
    this.socket = socket;
    for (const chunk of this.held) socket.send(chunk, { binary: true });
    this.held = [];
    if (this.exit) {
      this.sendExit(socket, this.exit);
      return;
    }
    socket.on('message', (data, isBinary) => {
      if (isBinary) return attachment.write(toBuffer(data));
      const message = controlMessage(toBuffer(data).toString('utf8'));
      if (message?.type === 'resize') attachment.resize(message.cols, message.rows);
      else if (message?.type === 'input') attachment.write(Buffer.from(message.data, 'utf8'));
      else
        socket.send(
          JSON.stringify({ type: 'error', message: 'unknown control message: send {"type":"resize","cols":N,"rows":N}, or terminal input as binary frames' }),
        );
    });
    socket.once('close', () => attachment.detach());
    void attachment.closed.then(() => {
      if (!this.exit && socket.readyState === socket.OPEN) socket.close(1011, 'the terminal connection to the VM was lost');
    });
  }

  private sendExit(socket: WebSocket, exit: PtyExit): void {
    if (socket.readyState !== socket.OPEN) return;
    socket.send(JSON.stringify({ type: 'exit', exit_code: exit.exitCode, signal: exit.signal }));
    socket.close(1000, 'terminal exited');
  }
}

export function terminalAttachHandler(terminals: TerminalService, authenticator: Authenticator): UpgradeHandler<AttachClaim> {
  const server = new WebSocketServer({ noServer: true, maxPayload: MAX_MESSAGE_BYTES });
  return {
    claim(request) {
      const match = CONNECT_PATH.exec(request.url ?? '');
      if (!match) return null;
      const id = decodeURIComponent(match[2]!);
      const token = new URLSearchParams(match[4]?.slice(1) ?? '').get('token');
      return { scope: match[1] === 'sessions' ? { kind: 'session', sessionId: id } : { kind: 'vm', vmId: id }, ptyId: decodeURIComponent(match[3]!), token };
    },
    async handle(request, socket, head, claim) {
      if (String(request.headers.upgrade).toLowerCase() !== 'websocket' || !request.headers['sec-websocket-key']) {
        throw new AppError('BAD_REQUEST', 'Not a WebSocket handshake (Upgrade: websocket with Sec-WebSocket-Key)');
      }
      const credential = credentialOf(request);
      let principal: Principal | null = null;
      if (credential) principal = await authenticator.authenticate(credential.value, credential.source);
      const grant = !principal && claim.token ? await terminals.redeemAttachToken(claim.token) : null;
      if (!principal && claim.token && !grant) {
        throw new AppError(
          'INVALID_CREDENTIALS',
          'This connect token is unknown, used or expired: read the terminal again (GET …/pty/sessions/{pty_id}) for a fresh one',
          { 'WWW-Authenticate': 'Bearer' },
        );
      }
      const bridge = new TerminalBridge();
      const { attachment } = await terminals.attach(principal, claim.scope, claim.ptyId, grant, bridge.handlers);
      await new Promise<void>((resolve) => {
        // Also when ws answered the handshake itself (e.g. an unsupported version): nobody is attached then.
        socket.once('close', () => {
          attachment.detach();
          resolve();
        });
        server.handleUpgrade(request, socket, head, (webSocket) => {
          bridge.connect(webSocket, attachment);
          resolve();
        });
      });
    },
  };
}
