/**
 * The agent's command line. In a VM it runs with no arguments (`node /opt/sandboxd/agent.mjs`): transport
 * `virtio:sandboxd.agent`, VM id from the kernel command line, real system changes.
 */
import { parseArgs } from 'node:util';

/** Where the agent meets its host. */
export type Transport = { kind: 'virtio'; portName: string } | { kind: 'unix'; path: string };

/** Parsed command line. */
export interface AgentOptions {
  transport: Transport;
  vmId: string | null | undefined;
  systemChanges: boolean;
  pythonCommand: string;
  cgroupRoot: string | null | undefined;
  prestartPython: boolean;
  /** A directory standing in for the transfer share (tests on a host); undefined: mount the VM's share. */
  transferDir: string | undefined;
}

/** The virtio-serial port name the host's QEMU command line gives the agent's channel. */
export const DEFAULT_PORT_NAME = 'sandboxd.agent';

export const USAGE = `usage: agent.mjs [--transport virtio:<port name>|unix:<socket path>] [--vm-id ID]
                 [--no-system-changes] [--python CMD] [--cgroup-root DIR|off] [--no-prestart-python]
                 [--transfer-dir DIR]`;

/** Parses `argv` (without node and script); throws with a usage message on bad input. */
export function parseAgentOptions(argv: string[]): AgentOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      transport: { type: 'string', default: `virtio:${DEFAULT_PORT_NAME}` },
      'vm-id': { type: 'string' },
      'no-system-changes': { type: 'boolean', default: false },
      python: { type: 'string', default: 'python3' },
      'cgroup-root': { type: 'string' },
      'no-prestart-python': { type: 'boolean', default: false },
      'transfer-dir': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  });
  const transport = String(values.transport);
  const separator = transport.indexOf(':');
  const kind = transport.slice(0, separator);
  const target = transport.slice(separator + 1);
  if (separator < 0 || !target || (kind !== 'virtio' && kind !== 'unix')) throw new Error(`bad --transport "${transport}"\n${USAGE}`);
  const cgroupRoot = values['cgroup-root'];
  return {
    transport: kind === 'virtio' ? { kind, portName: target } : { kind, path: target },
    vmId: values['vm-id'],
    systemChanges: !values['no-system-changes'],
    pythonCommand: String(values.python),
    cgroupRoot: cgroupRoot === 'off' ? null : cgroupRoot,
    prestartPython: !values['no-prestart-python'],
    transferDir: values['transfer-dir'],
  };
}
