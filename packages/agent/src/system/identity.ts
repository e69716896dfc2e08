/**
 * Who this guest is: the VM id the host assigned (from the kernel command line at boot, replaced by every
 * restore), plus what the kernel says (hostname, boot id). The agent uses no randomness of its own for any of
 * this: clones of one snapshot share the agent's memory, so an id drawn at boot would be the same in all of them.
 *
 * The kernel's boot id is drawn at its first read, not at boot, and never changes after that (and cannot be
 * written). Read in a snapshot's source VM, it would be every clone's; so the agent reads it only once a restore's
 * fix-up has reseeded the kernel's generator, and each clone then draws its own. Nothing else in the image reads it
 * (no systemd, no journald).
 */
import { readFile } from 'node:fs/promises';
import { hostname } from 'node:os';

/** The kernel command line parameter carrying the VM id at boot. */
export const VM_ID_PARAMETER = 'sandboxd.vm_id';

/** Mutable identity of the guest. */
export class AgentIdentity {
  private restored = false;

  constructor(
    /** The host-assigned VM id, or null until one is known. */
    public vmId: string | null,
  ) {}

  /** A restore's fix-up credited fresh entropy: the boot id may be drawn now. */
  markRestored(): void {
    this.restored = true;
  }

  /** The kernel's hostname now (changed by restores). */
  get hostname(): string {
    return hostname();
  }

  /** The kernel's boot id; null before the first restore (see above), or when it cannot be read. */
  async bootId(): Promise<string | null> {
    if (!this.restored) return null;
    return (await readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => '')).trim() || null;
  }
}

/** Reads `sandboxd.vm_id=` from the kernel command line, or null. */
export async function readVmIdFromCmdline(path = '/proc/cmdline'): Promise<string | null> {
  const cmdline = await readFile(path, 'utf8').catch(() => '');
  for (const word of cmdline.trim().split(/\s+/)) {
    if (word.startsWith(`${VM_ID_PARAMETER}=`)) return word.slice(VM_ID_PARAMETER.length + 1) || null;
  }
  return null;
}
