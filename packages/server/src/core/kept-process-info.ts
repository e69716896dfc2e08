/**
 * What a background process leaves with its kept exec in the VM's agent (the exec's `info`, at most 4 KiB of JSON),
 * and the process view rebuilt from it: a server that restarted finds its processes there again (processes.ts
 * adopts them). The environment is never part of it (it may carry secrets, and the view does not show it).
 */
import { MAX_KEPT_EXEC_INFO_BYTES, type KeptExecInfo } from '@sandboxd/agent/protocol';
import type { ProcessView } from './processes.ts';

/** The fields of a process view that cannot be read from the VM afterwards, plus the node that started it. */
export type KeptProcessInfo = Pick<ProcessView, 'process_id' | 'tag' | 'command' | 'argv' | 'cwd' | 'user' | 'stdin' | 'started_at'> & {
  /** The node whose memory held the process (only that node, restarted, adopts it). */
  node_id: string;
};

/** Process ids as `ProcessService` makes them. */
const PROCESS_ID = /^proc_[0-9a-f]{16}$/;
/** How much of a long command line is kept when the whole one does not fit. */
const SHORTENED_COMMAND_CHARS = 1000;

/** The info to keep with the exec, shortened (the command line first) until it fits the agent's limit. */
export function keptInfoOf(info: KeptProcessInfo): Record<string, unknown> {
  const fits = (candidate: KeptProcessInfo) => Buffer.byteLength(JSON.stringify(candidate)) <= MAX_KEPT_EXEC_INFO_BYTES;
  if (fits(info)) return { ...info };
  const line = info.command ?? (info.argv ?? []).join(' ');
  const shortened: KeptProcessInfo = { ...info, command: `${line.slice(0, SHORTENED_COMMAND_CHARS)}…`, argv: null };
  if (fits(shortened)) return { ...shortened };
  return { ...shortened, tag: null, cwd: '/', command: null };
}

/** The info read back from a kept exec of the agent, or null when it is not one of a background process. */
export function readKeptInfo(kept: KeptExecInfo): KeptProcessInfo | null {
  const info = kept.info;
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const processId = text(info.process_id);
  const nodeId = text(info.node_id);
  if (!processId || !PROCESS_ID.test(processId) || !nodeId) return null;
  const argv = Array.isArray(info.argv) && info.argv.every((part) => typeof part === 'string') ? (info.argv as string[]) : null;
  return {
    process_id: processId,
    node_id: nodeId,
    tag: text(info.tag),
    command: text(info.command),
    argv,
    cwd: text(info.cwd) ?? '/',
    user: text(info.user) ?? 'root',
    stdin: info.stdin === true,
    started_at: text(info.started_at) ?? new Date(0).toISOString(),
  };
}
