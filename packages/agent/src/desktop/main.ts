/**
 * The desktop service of the `desktop` template (`node /opt/sandboxd/desktop/desktop.mjs`): the computer-use API
 * on one loopback port and the noVNC viewer's files on another. Started by `start-desktop` before the template's
 * snapshot, so every desktop VM restored from it has it running.
 */
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { DesktopApi } from './api.ts';
import { Recorder } from './recorder.ts';
import { Screen } from './screen.ts';
import { serveStatic } from './static-files.ts';

const { values } = parseArgs({
  options: {
    display: { type: 'string', default: ':0' },
    'api-port': { type: 'string', default: '6081' },
    'viewer-port': { type: 'string', default: '6080' },
    'viewer-dir': { type: 'string', default: '/usr/share/novnc' },
    'recordings-dir': { type: 'string', default: '/var/lib/sandboxd-desktop/recordings' },
  },
  strict: true,
});

const listen = (server: ReturnType<typeof createServer>, port: string): Promise<void> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    // Loopback only: the host reaches it through the agent's tunnel, nothing on the VM's network does.
    server.listen(Number(port), '127.0.0.1', () => resolve());
  });

async function main(): Promise<void> {
  const recorder = new Recorder(values['recordings-dir']!, values.display!);
  await recorder.forgetLeftovers();
  const api = new DesktopApi(new Screen(values.display!), recorder);
  await listen(createServer(api.handle), values['api-port']!);
  await listen(createServer(serveStatic(values['viewer-dir']!)), values['viewer-port']!);
  console.log(`sandboxd-desktop: API on 127.0.0.1:${values['api-port']}, viewer on 127.0.0.1:${values['viewer-port']}`);
}

main().catch((error: unknown) => {
  console.error(`sandboxd-desktop: ${(error as Error).message}`);
  process.exit(1);
});
