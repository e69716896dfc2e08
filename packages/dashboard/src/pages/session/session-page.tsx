/**
 * One session: the page that lays out its panels (the VM's status and lifetime, run code, terminals, files,
 * the executions history, app URLs, shares and the desktop), each in a module of this folder.
 */
import { useState } from 'react';
import { Link } from '../../ui.tsx';
import { AppUrls } from './app-urls.tsx';
import { Desktop } from './desktop-panel.tsx';
import { Executions } from './executions.tsx';
import { Files } from './files.tsx';
import { RunCode } from './run-code.tsx';
import { Shares } from './shares.tsx';
import { StatusPanel } from './status-panel.tsx';
import { Terminals } from './terminals.tsx';

export function SessionPage({ sessionId }: { sessionId: string }) {
  const [ran, setRan] = useState(0);
  return (
    <section>
      <p>
        <Link to="/sandboxes">← Sandboxes</Link>
      </p>
      <h1>Sandbox session</h1>
      <div className="session-grid">
        <StatusPanel sessionId={sessionId} />
        <RunCode sessionId={sessionId} onRan={() => setRan((n) => n + 1)} />
        <Terminals sessionId={sessionId} />
        <Files sessionId={sessionId} version={ran} />
        <Executions sessionId={sessionId} version={ran} />
        <AppUrls sessionId={sessionId} />
        <Shares sessionId={sessionId} />
        <Desktop sessionId={sessionId} />
      </div>
    </section>
  );
}
