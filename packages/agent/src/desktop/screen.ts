/** The X display: screenshots, its size, the pointer, the windows on it. */
import { runTool } from './run.ts';
import { parseXwd, type RgbImage } from './xwd.ts';
import type { ScreenSize } from './actions.ts';

/** One top-level window, as the window manager lists it. */
export interface WindowInfo {
  id: string;
  title: string;
  pid: number | null;
  x: number;
  y: number;
  width: number;
  height: number;
  /** The virtual desktop it is on (-1: all of them). */
  desktop: number;
}

export const MIN_SCREEN = 320;
export const MAX_SCREEN_WIDTH = 3840;
export const MAX_SCREEN_HEIGHT = 2160;

export class Screen {
  constructor(private readonly display: string) {}

  private run(argv: string[], options: { timeoutMs?: number; maxOutputBytes?: number } = {}): Promise<Buffer> {
    return runTool(argv, { ...options, env: { DISPLAY: this.display } });
  }

  async capture(): Promise<RgbImage> {
    return parseXwd(await this.run(['xwd', '-root', '-silent'], { maxOutputBytes: MAX_SCREEN_WIDTH * MAX_SCREEN_HEIGHT * 4 + 65_536 }));
  }

  async size(): Promise<ScreenSize> {
    const out = (await this.run(['xdotool', 'getdisplaygeometry'])).toString('utf8').trim();
    const match = /^(\d+) (\d+)$/.exec(out);
    if (!match) throw new Error(`xdotool getdisplaygeometry answered ${JSON.stringify(out)}`);
    return { width: Number(match[1]), height: Number(match[2]) };
  }

  /**
   * Changes the screen's size through RandR, as a desktop user would: Xvnc's output (`VNC-0`) takes any mode, so a
   * size it does not list yet is added as a mode first (the timings mean nothing to a virtual screen). Connected
   * VNC viewers are told the new size; windows keep their places.
   */
  async resize(size: ScreenSize): Promise<ScreenSize> {
    const query = (await this.run(['xrandr', '-q'])).toString('utf8');
    const output = /^(\S+) connected/m.exec(query)?.[1];
    if (!output) throw new Error(`xrandr lists no connected output: ${query.slice(0, 200)}`);
    const mode = `${size.width}x${size.height}`;
    if (!new RegExp(`^\\s+${mode}\\s`, 'm').test(query)) {
      const { width: w, height: h } = size;
      await this.run(['xrandr', '--newmode', mode, '60', ...[w, w + 1, w + 2, w + 3, h, h + 1, h + 2, h + 3].map(String)]);
      await this.run(['xrandr', '--addmode', output, mode]);
    }
    await this.run(['xrandr', '--output', output, '--mode', mode]);
    return this.size();
  }

  async cursor(): Promise<{ x: number; y: number }> {
    const out = (await this.run(['xdotool', 'getmouselocation', '--shell'])).toString('utf8');
    const x = /^X=(\d+)$/m.exec(out)?.[1];
    const y = /^Y=(\d+)$/m.exec(out)?.[1];
    if (x === undefined || y === undefined) throw new Error(`xdotool getmouselocation answered ${JSON.stringify(out)}`);
    return { x: Number(x), y: Number(y) };
  }

  async xdotool(args: string[], timeoutMs: number): Promise<void> {
    await this.run(['xdotool', ...args], { timeoutMs });
  }

  /** Top-level windows, from the window manager (`wmctrl -lGp`: id, desktop, pid, x, y, width, height, host, title). */
  async windows(): Promise<WindowInfo[]> {
    const out = (await this.run(['wmctrl', '-lGp'])).toString('utf8');
    const windows: WindowInfo[] = [];
    for (const line of out.split('\n')) {
      const match = /^(0x[0-9a-f]+)\s+(-?\d+)\s+(\d+)\s+(-?\d+)\s+(-?\d+)\s+(\d+)\s+(\d+)\s+\S+\s?(.*)$/i.exec(line);
      if (!match) continue;
      const pid = Number(match[3]);
      windows.push({
        id: match[1]!,
        desktop: Number(match[2]),
        pid: pid > 0 ? pid : null,
        x: Number(match[4]),
        y: Number(match[5]),
        width: Number(match[6]),
        height: Number(match[7]),
        title: match[8] ?? '',
      });
    }
    return windows;
  }
}
