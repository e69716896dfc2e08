/**
 * The agent process: parse the command line, build the agent, attach the transport, announce
 * `sandboxd-stage: agent` on stdout (the serial console) once it serves. Console lines never carry secrets:
 * only stage markers, link events and error messages, never request contents or environment values.
 */
import { Agent } from './agent.ts';
import { findVirtioPort, waitForVirtioPort } from './link/find-virtio-port.ts';
import type { LinkEvent } from './link/link-server.ts';
import { UnixListener } from './link/unix-listener.ts';
import { VirtioPortLink } from './link/virtio-port-link.ts';
import { parseAgentOptions, readEnvFile } from './options.ts';
import { readVmIdFromCmdline } from './system/identity.ts';

/** How long to wait for the virtio-serial port at boot (module probing is slow under TCG). */
const PORT_WAIT_MS = 30_000;

function logLinkEvent(event: LinkEvent): void {
  if (event.type === 'session-error') console.error(`sandboxd-agent: session error on ${event.link}: ${event.error.message}`);
  else if (event.type === 'link-closed') console.error(`sandboxd-agent: link ${event.link} closed${event.error ? `: ${event.error.message}` : ''}`);
}

async function main(): Promise<void> {
  // guest-init sizes libuv's pool for the agent (see there); the programs the agent starts get the usual default.
  delete process.env.UV_THREADPOOL_SIZE;
  const options = parseAgentOptions(process.argv.slice(2));
  // guest-init's HOME (/root, which exists in every image sandboxd boots) stays the agent's working directory even
  // where an image's Env names another home for its programs.
  const home = process.env.HOME ?? '/';
  // An OCI image's Env: every program started for the user inherits the agent's environment (the agent's own
  // Python runs isolated from it, see privileged-helper.ts).
  if (options.envFile) Object.assign(process.env, await readEnvFile(options.envFile));
  const agent = await Agent.create({
    vmId: options.vmId ?? (await readVmIdFromCmdline()),
    systemChanges: options.systemChanges,
    pythonCommand: options.pythonCommand,
    helperPythonCommand: options.helperPythonCommand,
    cgroupRoot: options.cgroupRoot,
    prestartPython: options.prestartPython,
    ...(options.transferDir ? { transferDir: options.transferDir } : {}),
    defaultShell: [options.shell, '-lc'],
    home,
    onLinkEvent: logLinkEvent,
  });

  let stopTransport: () => Promise<void>;
  if (options.transport.kind === 'unix') {
    const listener = new UnixListener(options.transport.path, (link) => agent.serve(link));
    await listener.listen();
    stopTransport = () => listener.close();
  } else {
    const { portName } = options.transport;
    const device = (await findVirtioPort(portName)) ?? (await waitForVirtioPort(portName, PORT_WAIT_MS));
    const link = await VirtioPortLink.open(device);
    const server = agent.serve(link);
    // The port is the only way in: if it is gone, so is the agent's purpose. tini then ends the VM.
    void server.closed.then(() => {
      console.error('sandboxd-error: agent: the virtio-serial port closed');
      process.exit(1);
    });
    stopTransport = async () => server.close();
  }
  console.log('sandboxd-stage: agent');

  const stop = async (): Promise<void> => {
    await stopTransport();
    await agent.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((error: unknown) => {
  console.error(`sandboxd-error: agent: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
