/** What every tool and resource works with: the client acting as the caller, and the limits of answers. */
import type { Sandboxd } from '@sandboxd/sdk';

export interface SandboxdMcpOptions {
  /** Server name shown to MCP hosts (default `sandboxd`). */
  name?: string;
  /** Server version shown to MCP hosts. */
  version?: string;
  /**
   * Characters of program output or file text one tool result may hold (default 20000). Longer text is cut in
   * the middle and the result says so: a model's context is the scarce thing here, not the sandbox's.
   */
  maxOutputChars?: number;
  /** Milliseconds between progress notifications of a long call (default 2000). */
  progressIntervalMs?: number;
  /** Seconds create_sandbox waits for the sandbox's VM to be up (default 120). */
  readyTimeoutSeconds?: number;
}

export interface ToolContext {
  client: Sandboxd;
  maxOutputChars: number;
  progressIntervalMs: number;
  readyTimeoutSeconds: number;
}

export const DEFAULT_MAX_OUTPUT_CHARS = 20_000;
export const DEFAULT_PROGRESS_INTERVAL_MS = 2_000;
export const DEFAULT_READY_TIMEOUT_SECONDS = 120;

export function toolContext(client: Sandboxd, options: SandboxdMcpOptions): ToolContext {
  return {
    client,
    maxOutputChars: options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
    progressIntervalMs: options.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS,
    readyTimeoutSeconds: options.readyTimeoutSeconds ?? DEFAULT_READY_TIMEOUT_SECONDS,
  };
}
