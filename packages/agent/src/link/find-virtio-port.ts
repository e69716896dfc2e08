/**
 * Finds a virtio-serial port's device by name. Without udev there is no `/dev/virtio-ports/<name>`; the names
 * are in `/sys/class/virtio-ports/vportNpM/name`, and devtmpfs provides `/dev/vportNpM`.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where the kernel lists virtio-serial ports. */
export const VIRTIO_PORTS_DIR = '/sys/class/virtio-ports';

/** The device path of the port named `name`, or null if no such port exists (yet). */
export async function findVirtioPort(name: string, sysDir = VIRTIO_PORTS_DIR, devDir = '/dev'): Promise<string | null> {
  let ports: string[];
  try {
    ports = await readdir(sysDir);
  } catch {
    return null;
  }
  for (const port of ports) {
    const portName = await readFile(join(sysDir, port, 'name'), 'utf8').catch(() => '');
    if (portName.trim() === name) return join(devDir, port);
  }
  return null;
}

/**
 * Waits for the port to appear: the virtio_console module may still be probing when the agent starts.
 * Polls every `intervalMs` for at most `timeoutMs`.
 */
export async function waitForVirtioPort(name: string, timeoutMs: number, intervalMs = 20): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const device = await findVirtioPort(name);
    if (device) return device;
    if (Date.now() > deadline) throw new Error(`virtio-serial port "${name}" did not appear in ${VIRTIO_PORTS_DIR} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
