/**
 * Computer use on a desktop sandbox (create_sandbox with template "desktop"): computer_screenshot sees the screen,
 * computer_action runs one action of Anthropic's computer-use tool as it is (the API takes that input unchanged).
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { COMPUTER_ACTIONS, type ComputerAction } from '@sandboxd/sdk';
import { z } from 'zod';
import type { ToolContext } from '../context.ts';
import { withProgress } from '../progress.ts';
import { guarded, imageResult, textResult } from '../results.ts';
import { desktopSessionId } from '../schemas.ts';

const point = z.tuple([z.number().int().min(0).max(10_000), z.number().int().min(0).max(10_000)]);

export function registerComputerTools(server: McpServer, ctx: ToolContext): void {
  const computer = ctx.client.computerUse;

  server.registerTool(
    'computer_screenshot',
    {
      title: 'Screenshot of the desktop',
      description:
        'The screen of a desktop sandbox as an image. Coordinates for computer_action are pixels of the full-size screen (the caption gives its size).',
      inputSchema: {
        session_id: desktopSessionId,
        scale: z
          .number()
          .min(0.05)
          .max(1)
          .optional()
          .describe('Shrink the image by this factor, 0.05 to 1 (default 1: full size). Coordinates stay full-size pixels'),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) =>
      guarded(async () => {
        const png = await withProgress(extra, 'taking a screenshot', ctx.progressIntervalMs, () =>
          computer.screenshot(args.session_id, args.scale !== undefined ? { scale: args.scale } : {}),
        );
        const size = pngSize(png);
        return imageResult(
          Buffer.from(png).toString('base64'),
          'image/png',
          `Screen of desktop ${args.session_id}${size ? `: image ${size.width}×${size.height} pixels` : ''}${args.scale !== undefined && args.scale < 1 ? ` (scaled by ${args.scale})` : ''}`,
        );
      }),
  );

  server.registerTool(
    'computer_action',
    {
      title: 'Act on the desktop',
      description:
        "Runs one mouse, keyboard or screen action on a desktop sandbox, with the input of Anthropic's computer-use tool. " +
        'Clicks and mouse_move take coordinate [x, y] in screen pixels; left_click_drag takes start_coordinate and coordinate; type takes text (\\n presses Return); ' +
        'key and hold_key take X keysym names in text ("Return", "ctrl+s", "alt+Tab"); scroll takes scroll_direction and scroll_amount (and optionally coordinate); ' +
        'wait and hold_key take duration in seconds. screenshot returns the screen as an image; set screenshot_after to see the screen after any other action.',
      inputSchema: {
        session_id: desktopSessionId,
        action: z.enum(COMPUTER_ACTIONS).describe('The action'),
        coordinate: point.optional().describe('[x, y] in screen pixels'),
        start_coordinate: point.optional().describe('[x, y] where a left_click_drag starts'),
        text: z.string().max(10_000).optional().describe('Text to type, keys to press, or modifier keys held during a click or scroll'),
        scroll_direction: z.enum(['up', 'down', 'left', 'right']).optional().describe('Direction of a scroll'),
        scroll_amount: z.number().int().min(1).max(100).optional().describe('Wheel clicks of a scroll (default 3)'),
        duration: z.number().min(0).max(60).optional().describe('Seconds, for wait and hold_key'),
        screenshot_after: z.boolean().default(false).describe('Also return a screenshot taken after the action (default false)'),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) =>
      guarded(async () => {
        const { session_id, screenshot_after, ...input } = args;
        const result = await withProgress(extra, `${input.action}`, ctx.progressIntervalMs, () => computer.action(session_id, input as ComputerAction));
        if (result.base64_image)
          return imageResult(result.base64_image, result.media_type ?? 'image/png', `Screen of desktop ${session_id} (${result.elapsed_ms} ms)`);
        const text = `${result.action} done in ${result.elapsed_ms} ms${result.cursor ? `; the pointer is at [${result.cursor.x}, ${result.cursor.y}]` : ''}.`;
        if (!screenshot_after)
          return textResult(text, { action: result.action, elapsed_ms: result.elapsed_ms, ...(result.cursor ? { cursor: result.cursor } : {}) });
        const png = await computer.screenshot(session_id);
        return imageResult(Buffer.from(png).toString('base64'), 'image/png', `${text} The screen afterwards.`);
      }),
  );
}

/** Width and height from a PNG's IHDR chunk, or null. */
function pngSize(bytes: Uint8Array): { width: number; height: number } | null {
  if (bytes.length < 24 || bytes[0] !== 0x89 || bytes[1] !== 0x50) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}
