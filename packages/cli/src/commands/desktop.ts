/**
 * sandbox desktop [SESSION_ID]: the viewer of a desktop session (noVNC in a browser), made if needed. Without a
 * session id a new desktop session is created. Prints the viewer URL (and opens it with --open); `screenshot`
 * writes the screen to a PNG file.
 */
import fs from 'node:fs';
import type { Command } from 'commander';
import type { Context, GlobalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { tryOpenBrowser } from '../open-browser.ts';
import { keyValues } from '../output.ts';
import { integer } from '../parse.ts';

interface DesktopOptions {
  viewOnly?: boolean;
  open?: boolean;
  width?: number;
  height?: number;
  lifetime?: number;
}

export function registerDesktop(program: Command, context: (options: GlobalOptions) => Context): void {
  const desktop = program
    .command('desktop')
    .description('open the viewer of a desktop session (computer use): a new one, or SESSION_ID')
    .argument('[session_id]', 'an existing desktop session (default: create one)')
    .option('--view-only', 'watch only: the server drops input from the viewer')
    .option('--open', 'open the viewer in your browser')
    .option('--width <pixels>', 'screen width of a new desktop, 320 to 3840 (default 1280)', integer('--width', 320, 3840))
    .option('--height <pixels>', 'screen height of a new desktop, 320 to 2160 (default 800)', integer('--height', 320, 2160))
    .option('--lifetime <seconds>', "lifetime of a new desktop VM, 20 to 2592000 (default: the server's)", integer('--lifetime', 20, 2_592_000))
    .action(async (sessionId: string | undefined, options: DesktopOptions, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      if (sessionId !== undefined && (options.width !== undefined || options.height !== undefined || options.lifetime !== undefined)) {
        throw new UsageError('--width, --height and --lifetime are for a new desktop: leave out SESSION_ID');
      }
      const spinner = ctx.out.spinner(sessionId ? 'Starting the viewer…' : 'Starting a desktop…');
      let viewer;
      try {
        const session =
          sessionId !== undefined
            ? ctx.client.computerUse.connect(sessionId)
            : await ctx.client.computerUse.create({
                ...(options.width !== undefined ? { screenWidth: options.width } : {}),
                ...(options.height !== undefined ? { screenHeight: options.height } : {}),
                ...(options.lifetime !== undefined ? { vmLifetimeSeconds: options.lifetime } : {}),
              });
        viewer = await session.viewerUrl({ viewOnly: options.viewOnly ?? false });
      } finally {
        spinner.stop();
      }
      const opened = options.open ? tryOpenBrowser(viewer.viewer_url) : false;
      ctx.out.result({ ...viewer, opened }, () =>
        keyValues([
          ['session', viewer.session_id],
          ['viewer', viewer.viewer_url],
          ['websocket', viewer.websocket_url],
          ['mode', viewer.view_only ? 'view only' : 'interactive'],
          ['expires', viewer.expires_at],
          ...(options.open ? ([['opened', opened ? 'yes' : 'no browser opener here: open the viewer URL yourself']] as [string, unknown][]) : []),
        ]),
      );
    });

  desktop
    .command('screenshot')
    .description("write a desktop session's screen to a PNG file")
    .argument('<session_id>', 'the desktop session')
    .option('-o, --output <file>', 'where the PNG goes (default desktop-<session id>.png; "-" for stdout)')
    .option('--scale <factor>', 'shrink by this factor, 0.05 to 1', (value: string) => {
      const scale = Number(value);
      if (!Number.isFinite(scale) || scale < 0.05 || scale > 1) throw new UsageError(`--scale must be a number from 0.05 to 1, got "${value}"`);
      return scale;
    })
    .action(async (sessionId: string, options: { output?: string; scale?: number }, command: Command) => {
      const ctx = context(command.optsWithGlobals());
      if (options.output === '-' && ctx.out.json) throw new UsageError('--json and "-o -" (stdout) do not go together: the image would mix with the JSON');
      const png = await ctx.client.computerUse.screenshot(sessionId, options.scale !== undefined ? { scale: options.scale } : {});
      if (options.output === '-') {
        process.stdout.write(png);
        return;
      }
      const file = options.output ?? `desktop-${sessionId}.png`;
      fs.writeFileSync(file, png);
      ctx.out.result({ session_id: sessionId, file, bytes: png.length }, () => `Wrote ${file} (${png.length} bytes).`);
    });
}
