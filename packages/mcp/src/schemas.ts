/** Input fields shared by several tools, described for a model. */
import { z } from 'zod';

export const sessionId = z.string().min(1).max(64).describe('The sandbox to act on: the session_id that create_sandbox returned (list_sandboxes lists yours)');

export const browserSessionId = z.string().min(1).max(64).describe('The browser session: the id browser_open returned');

export const desktopSessionId = z.string().min(1).max(64).describe('A desktop sandbox: the session_id create_sandbox returned for template "desktop"');

export const guestPath = z
  .string()
  .min(1)
  .max(4096)
  .describe('A path in the sandbox: absolute, or relative to /root (the home directory and working directory of runs)');

export const timeoutSeconds = z
  .number()
  .int()
  .min(1)
  .max(600)
  .default(30)
  .describe(
    'Seconds to wait for the result (1 to 600, default 30). A run that takes longer keeps going in the sandbox, and get_execution fetches its result later',
  );
