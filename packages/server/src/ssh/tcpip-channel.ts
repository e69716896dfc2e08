/**
 * `ssh -L local:host:port`: a `direct-tcpip` channel becomes a TCP connection to `port` on the guest's loopback,
 * through the agent (no host networking reaches the guest). Only the guest itself is a destination: the
 * host part must name it (localhost, 127.0.0.1, ::1, or the VM id), so the gateway never becomes a proxy into
 * the guest's network.
 */
import type { ServerChannel } from 'ssh2';
import type { LoginVm } from './login.ts';

const LOCAL_NAMES = new Set(['localhost', '127.0.0.1', '::1', '0.0.0.0']);

/** Why a destination is refused, or null when the guest serves it. */
export function refusedDestination(host: string, port: number, vmId: string): string | null {
  if (!LOCAL_NAMES.has(host.toLowerCase()) && host !== vmId) return `only the VM itself can be reached (localhost:${port}), not ${host}`;
  if (!Number.isInteger(port) || port < 1 || port > 65_535) return `port ${port} is not a TCP port`;
  return null;
}

export async function openTunnelChannel(target: LoginVm, port: number, channel: () => ServerChannel): Promise<void> {
  const tunnel = await target.agent.openTunnel(port);
  const stream = channel();
  stream.pipe(tunnel).pipe(stream);
  const end = () => {
    tunnel.destroy();
    stream.destroy();
  };
  tunnel.once('close', end).once('error', end);
  stream.once('close', end).once('error', end);
}
