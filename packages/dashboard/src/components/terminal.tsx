/**
 * A terminal in the browser: xterm.js attached to a PTY of the session over its WebSocket. The browser never
 * holds a key: each attach reads the terminal (GET …/pty/sessions/{pty_id}) for a fresh single-use connect token and puts it in
 * the WebSocket's URL.
 * Closing the view only detaches; attaching again replays the terminal's scrollback. Loaded on demand
 * (a dynamic import), so xterm.js is not part of the first load.
 */
import { useEffect, useRef, useState } from 'react';
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { api, type PtySession } from '../api.ts';
import { messageOf } from '../ui.tsx';

function socketUrl(sessionId: string, ptyId: string, token: string): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}/v1/sessions/${encodeURIComponent(sessionId)}/pty/sessions/${encodeURIComponent(ptyId)}/connect?token=${encodeURIComponent(token)}`;
}

export default function TerminalView({ sessionId, ptyId }: { sessionId: string; ptyId: string }) {
  const host = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<'connecting' | 'attached' | 'detached' | 'exited'>('connecting');
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const terminal = new Terminal({ convertEol: false, cursorBlink: true, fontSize: 14, scrollback: 5000 });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(host.current!);
    fit.fit();
    let socket: WebSocket | null = null;
    let closed = false;
    const encoder = new TextEncoder();

    const sendResize = () => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: 'resize', cols: terminal.cols, rows: terminal.rows }));
    };
    const input = terminal.onData((data) => {
      if (socket?.readyState === WebSocket.OPEN) socket.send(encoder.encode(data));
    });
    const observer = new ResizeObserver(() => {
      fit.fit();
      sendResize();
    });
    observer.observe(host.current!);

    (async () => {
      const connect = await api<PtySession>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}/pty/sessions/${encodeURIComponent(ptyId)}`);
      if (closed) return;
      socket = new WebSocket(socketUrl(sessionId, ptyId, connect.connect_token));
      socket.binaryType = 'arraybuffer';
      socket.onopen = () => {
        setState('attached');
        sendResize();
        terminal.focus();
      };
      socket.onmessage = (event) => {
        if (typeof event.data === 'string') {
          const message = JSON.parse(event.data) as { type?: string };
          if (message.type === 'exit') setState('exited');
          return;
        }
        terminal.write(new Uint8Array(event.data as ArrayBuffer));
      };
      socket.onclose = () => setState((current) => (current === 'exited' ? current : 'detached'));
    })().catch((reason: unknown) => setError(messageOf(reason)));

    return () => {
      closed = true;
      observer.disconnect();
      input.dispose();
      socket?.close();
      terminal.dispose();
    };
  }, [sessionId, ptyId]);

  return (
    <div className="terminal-box">
      <p className="muted" role="status">
        Terminal {ptyId}: {error ?? state}
      </p>
      <div ref={host} className="terminal" aria-label="Terminal" data-testid="terminal" />
    </div>
  );
}
