/**
 * The agent's command line. In a VM it runs with no arguments (`node /opt/sandboxd/agent.mjs`): transport
 * `virtio:sandboxd.agent`, VM id from the kernel command line, real system changes.
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

/** Where the agent meets its host. */
export type Transport = { kind: 'virtio'; portName: string } | { kind: 'unix'; path: string };

/** Parsed command line. */
export interface AgentOptions {
  transport: Transport;
  vmId: string | null | undefined;
  systemChanges: boolean;
  /** Interpreter of the user's Python kernels. */
  pythonCommand: string;
  /**
   * Interpreter of the agent's own Python (privileged helper, terminal relay); default `pythonCommand`. An image
   * whose root filesystem is not sandboxd's runs them on the injected runtime's Python and the user's kernels on
   * the image's own.
   */
  helperPythonCommand: string;
  /** Shell of exec `command` requests without their own, run as `<shell> -lc <command>`. */
  shell: string;
  /**
   * A JSON object of environment variables (an OCI image's `Env`) laid over the agent's environment at start,
   * so every program it starts for the user gets them; undefined: none.
   */
  envFile: string | undefined;
  cgroupRoot: string | null | undefined;
  prestartPython: boolean;
  /** A directory standing in for the transfer share (tests on a host); undefined: mount the VM's share. */
  transferDir: string | undefined;
}

/** The virtio-serial port name the host's QEMU command line gives the agent's channel. */
export const DEFAULT_PORT_NAME = 'sandboxd.agent';

export const USAGE = `usage: agent.mjs [--transport virtio:<port name>|unix:<socket path>] [--vm-id ID]
                 [--no-system-changes] [--python CMD] [--helper-python CMD] [--shell PATH]
                 [--env-file FILE] [--cgroup-root DIR|off] [--no-prestart-python] [--transfer-dir DIR]`;

/** Parses `argv` (without node and script); throws with a usage message on bad input. */
export function parseAgentOptions(argv: string[]): AgentOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      transport: { type: 'string', default: `virtio:${DEFAULT_PORT_NAME}` },
      'vm-id': { type: 'string' },
      'no-system-changes': { type: 'boolean', default: false },
      python: { type: 'string', default: 'python3' },
      'helper-python': { type: 'string' },
      shell: { type: 'string', default: '/bin/bash' },
      'env-file': { type: 'string' },
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
    helperPythonCommand: values['helper-python'] ?? String(values.python),
    shell: String(values.shell),
    envFile: values['env-file'],
    cgroupRoot: cgroupRoot === 'off' ? null : cgroupRoot,
    prestartPython: !values['no-prestart-python'],
    transferDir: values['transfer-dir'],
  };
}

/**
 * Reads an `--env-file`: a JSON object of variable names to string values. Names must be non-empty and hold no
 * `=`; neither may hold a NUL byte (the kernel could not pass them on). Throws naming the file on anything else.
 */
export async function readEnvFile(path: string): Promise<Record<string, string>> {
  const parsed: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${path}: not a JSON object`);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (typeof value !== 'string' || name === '' || name.includes('=') || `${name}${value}`.includes('\0')) {
      throw new Error(`${path}: bad variable ${JSON.stringify(name)}`);
    }
    env[name] = value;
  }
  return env;
}
