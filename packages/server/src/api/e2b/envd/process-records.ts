/**
 * What the SDK asked to run, kept by the facade for `List` (envd lists each process with its cmd, args, envs, cwd
 * and tag). sandboxd's own records keep no environment (its values may be secrets, and the native API never shows
 * them back), and terminals keep no tag, so the facade remembers the request itself, in this server's memory, under
 * the id of the process or terminal it started. The newest {@link MAX_RECORDS} are kept: a record outlives its
 * process only until newer ones push it out, and List shows only what still runs.
 */
import type { ProcessConfig } from './gen/process/process_pb.ts';

/** Requests remembered at most (the oldest go first); far above what runs at once in all sandboxes of a node. */
export const MAX_RECORDS = 4096;

/** A started process or terminal, as the SDK described it. */
export interface ProcessRecord {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  cwd: string | undefined;
  tag: string | undefined;
}

export class ProcessRecords {
  private readonly records = new Map<string, ProcessRecord>();

  /** Remembers the request that started `id` (a process id or a terminal id). */
  remember(id: string, config: ProcessConfig, tag: string | undefined, cwd: string): void {
    this.records.delete(id);
    this.records.set(id, { cmd: config.cmd, args: [...config.args], envs: { ...config.envs }, cwd, tag });
    while (this.records.size > MAX_RECORDS) this.records.delete(this.records.keys().next().value!);
  }

  find(id: string): ProcessRecord | undefined {
    return this.records.get(id);
  }
}
